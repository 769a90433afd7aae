// A TCP proxy on loopback that holds back the server's answers for a while: a request whose answer
// is lost or late (a loaded machine, a slow link) after the server applied it, made on cue.
import { createConnection, createServer } from 'node:net';
import type { Socket } from 'node:net';

/** A proxy to one port that holds the server's bytes from one client publish to another. */
export interface AnswerHoldingProxy {
  /** The port it listens on. */
  port: number;
  /** How many times it held the server's bytes back. */
  holds(): number;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts a proxy to `127.0.0.1:targetPort` that, once a client publishes on `holdFrom`, holds what
 * the server sends that client (the answer included) until the client publishes on `releaseOn`.
 */
export async function startAnswerHoldingProxy(targetPort: number, subjects: { holdFrom: string; releaseOn: string }): Promise<AnswerHoldingProxy> {
  const open = new Set<Socket>();
  let holds = 0;
  const server = createServer((inbound) => {
    const outbound = createConnection({ host: '127.0.0.1', port: targetPort });
    open.add(inbound).add(outbound);
    let held: Buffer[] | null = null;
    // the end of what the client sent last, so that a subject cut across two chunks is still seen
    let tail = '';
    inbound.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      tail = text.slice(-200);
      if (held === null && text.includes(`PUB ${subjects.holdFrom} `)) {
        held = [];
        holds++;
        tail = '';
      } else if (held !== null && text.includes(`PUB ${subjects.releaseOn} `)) {
        // the client's publish first: the server's answer to it then follows what was held
        outbound.write(chunk);
        for (const b of held) inbound.write(b);
        held = null;
        tail = '';
        return;
      }
      outbound.write(chunk);
    });
    outbound.on('data', (chunk: Buffer) => {
      if (held === null) inbound.write(chunk);
      else held.push(chunk);
    });
    for (const [from, to] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
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
  return {
    port: address.port,
    holds: () => holds,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
