// A TCP proxy on loopback that a test can cut and heal: a network partition of one link, with
// no root and no iptables.
import { createConnection, createServer } from 'node:net';
import type { Socket } from 'node:net';

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
  const open = new Set<Socket>();
  let isCut = false;
  const server = createServer((inbound) => {
    if (isCut) {
      inbound.destroy();
      return;
    }
    const outbound = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const [from, to] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      open.add(from);
      from.pipe(to);
      // either side gone takes the other with it, as a broken link does
      from.on('error', () => to.destroy());
      from.on('close', () => {
        open.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const dropAll = (): void => {
    for (const s of open) s.destroy();
  };
  return {
    port: address.port,
    cut: () => {
      isCut = true;
      dropAll();
    },
    heal: () => {
      isCut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
