// A TCP proxy on loopback that a test can cut and heal: a network partition of one link, with
// no root and no iptables.
import { startLoopbackProxy } from './loopbackProxy.ts';

/** A proxy to one port; cut, it drops every connection through it and each new one at once. */
export interface CuttableProxy {
  /** The port it listens on. */
  port: number;
  /** Drops every connection through it and, until `heal()`, each new one. */
  cut(): void;
  /** Lets connections through again. */
  heal(): void;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port that forwards to `127.0.0.1:targetPort`. */
export async function startCuttableProxy(targetPort: number): Promise<CuttableProxy> {
  let isCut = false;
  const proxy = await startLoopbackProxy(
    targetPort,
    (inbound, outbound) => {
      inbound.pipe(outbound);
      outbound.pipe(inbound);
    },
    () => !isCut,
  );
  return {
    port: proxy.port,
    cut: () => {
      isCut = true;
      proxy.dropAll();
    },
    heal: () => {
      isCut = false;
    },
    close: () => proxy.close(),
  };
}
