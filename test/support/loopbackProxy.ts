// What the test's loopback TCP proxies share: a listener on a free loopback port whose
// connections are paired with one to the target, each side gone taking the other with it (as a
// broken link does), and a close that drops them all.
import { createConnection, createServer } from 'node:net';
import type { Socket } from 'node:net';

/** A listening proxy: its port, what drops every connection through it, and its close. */
export interface LoopbackProxy {
  /** The port it listens on. */
  port: number;
  /** Drops every connection through it (new ones are still accepted). */
  dropAll(): void;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Listens on a free loopback port; each connection gets one to `127.0.0.1:targetPort`, handed to
 * `pair` to move bytes between them (while `accept` says no, a new connection is dropped at once).
 */
export async function startLoopbackProxy(targetPort: number, pair: (inbound: Socket, outbound: Socket) => void, accept: () => boolean = () => true): Promise<LoopbackProxy> {
  const open = new Set<Socket>();
  const server = createServer((inbound) => {
    if (!accept()) {
      inbound.destroy();
      return;
    }
    const outbound = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const [from, to] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      open.add(from);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        open.delete(from);
        to.destroy();
      });
    }
    pair(inbound, outbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const dropAll = (): void => {
    for (const s of open) s.destroy();
  };
  return {
    port: address.port,
    dropAll,
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
