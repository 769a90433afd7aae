import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startLinkProxy } from './drillLinkProxy.ts';
import type { LinkProxy } from './drillLinkProxy.ts';

let echo: Server | null = null;
let proxy: LinkProxy | null = null;
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
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
    expect(await proxy.connections()).toBe(1);
    await proxy.delay(200);
    const slow = await roundTrip(socket, 'slow\n');
    expect(slow).toBeGreaterThanOrEqual(195);
    expect(slow).toBeLessThan(600);
    // many writes queued behind the delay come out whole and in order
    const many = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join('');
    const manyMs = await roundTrip(socket, many);
    expect(manyMs).toBeGreaterThanOrEqual(195);
    await proxy.delay(0);
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
    expect(await proxy.connections()).toBe(0);
  });
});

// a Node.js process of its own running `code`; resolves with it once it printed its first line
async function nodeProcess(code: string): Promise<{ child: ChildProcess; firstLine: string; exited: Promise<string> }> {
  const child = spawn(process.execPath, ['-e', code]);
  children.push(child);
  let out = '';
  const exited = new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
  const firstLine = await new Promise<string>((resolve) => {
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
  });
  return { child, firstLine, exited };
}

describe('startLinkProxy, in a thread of its own', () => {
  it("forwards other processes' traffic while the drill's own thread is busy", async () => {
    // NATS and a replica stand-in, each a process of its own: only the proxy is in this one
    const server = await nodeProcess(`
      const srv = require('node:net').createServer((s) => s.pipe(s));
      srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
    `);
    proxy = await startLinkProxy([{ host: '127.0.0.1', port: Number(server.firstLine) }]);
    // sends a byte through the proxy every 20 ms, 60 times, and prints the slowest echo
    const client = await nodeProcess(`
      const s = require('node:net').createConnection({ host: '127.0.0.1', port: ${proxy.ports[0]} });
      let worst = 0, started = 0, n = 0;
      const send = () => {
        if (n++ >= 60) { console.log(Math.round(worst)); s.destroy(); return; }
        setTimeout(() => { started = performance.now(); s.write('x'); }, 20);
      };
      s.on('data', () => { worst = Math.max(worst, performance.now() - started); send(); });
      s.on('connect', () => { console.log('connected'); send(); });
    `);
    expect(client.firstLine).toBe('connected');
    // the drill's thread does nothing else for 800 ms (its workload, agents and checks, at their worst)
    await new Promise((resolve) => setTimeout(resolve, 200));
    const busyUntil = performance.now() + 800;
    while (performance.now() < busyUntil) {
      // busy
    }
    const out = await client.exited;
    const worst = Number(out.trim().split('\n').at(-1));
    // in this thread the proxy would have held an echo for the whole busy stretch
    expect(worst).toBeGreaterThanOrEqual(0);
    expect(worst).toBeLessThan(400);
  });
});
