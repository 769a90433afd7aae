import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLinkProxy } from './drillLinkProxy.ts';
import type { LinkProxy } from './drillLinkProxy.ts';

let echo: Server | null = null;
let proxy: LinkProxy | null = null;

afterEach(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => (echo === null ? resolve() : echo.close(() => resolve())));
  echo = null;
  proxy = null;
});

async function echoServer(): Promise<number> {
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => echo?.listen(0, '127.0.0.1', () => resolve()));
  const address = echo.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

// one line sent, the time until its echo is back whole
async function roundTrip(socket: Socket, line: string): Promise<number> {
  const started = performance.now();
  let got = '';
  await new Promise<void>((resolve) => {
    const onData = (b: Buffer): void => {
      got += b.toString();
      if (got.length >= line.length) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
    socket.write(line);
  });
  expect(got).toBe(line);
  return performance.now() - started;
}

describe('startLinkProxy', () => {
  it('passes bytes through, then holds what the client sends for the delay, in order, then passes through again', async () => {
    const port = await echoServer();
    proxy = await startLinkProxy([{ host: '127.0.0.1', port }]);
    const socket = createConnection({ host: '127.0.0.1', port: proxy.ports[0] as number });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    expect(await roundTrip(socket, 'fast\n')).toBeLessThan(100);
    expect(proxy.connections()).toBe(1);
    proxy.delay(200);
    const slow = await roundTrip(socket, 'slow\n');
    expect(slow).toBeGreaterThanOrEqual(195);
    expect(slow).toBeLessThan(600);
    // many writes queued behind the delay come out whole and in order
    const many = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join('');
    const manyMs = await roundTrip(socket, many);
    expect(manyMs).toBeGreaterThanOrEqual(195);
    proxy.delay(0);
    expect(await roundTrip(socket, 'fast again\n')).toBeLessThan(100);
    socket.destroy();
  });

  it('closes the client when NATS cannot be reached (a node down), so the client reconnects', async () => {
    const port = await echoServer();
    await new Promise<void>((resolve) => echo?.close(() => resolve()));
    echo = null;
    proxy = await startLinkProxy([{ host: '127.0.0.1', port }]);
    const socket = createConnection({ host: '127.0.0.1', port: proxy.ports[0] as number });
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(proxy.connections()).toBe(0);
  });
});
