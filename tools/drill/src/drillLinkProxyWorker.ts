// The drill's link proxies (see drillLinkProxy.ts), run in a thread of their own: every byte a
// replica sends to NATS goes through them, so they must not wait behind the drill's own work (the
// workload, hundreds of simulated agents, the checks), which would slow every replica's round
// trip even when no fault is in force.
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import type { LinkTarget, ProxyReply, ProxyRequest } from './drillLinkProxyProtocol.ts';

const port = parentPort;
if (port === null) throw new Error('drillLinkProxyWorker.ts runs as a worker thread');

const targets = (workerData as { targets: LinkTarget[] }).targets;
let delayMs = 0;
const sockets = new Set<Socket>();
const servers: Server[] = [];

// one replica's connection to one NATS node through the proxy
function pipe(client: Socket, target: LinkTarget): void {
  const upstream = createConnection({ host: target.host, port: target.port });
  sockets.add(client);
  sockets.add(upstream);
  const end = (): void => {
    client.destroy();
    upstream.destroy();
    sockets.delete(client);
    sockets.delete(upstream);
  };
  client.on('error', end).on('close', end);
  upstream.on('error', end).on('close', end);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  // NATS to the replica: as it comes (the impairment is on what the replica sends)
  upstream.pipe(client);
  // the replica to NATS: each chunk after the delay in force when it arrived, never reordered
  const queue: { due: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    timer = null;
    const now = Date.now();
    while (queue.length > 0 && (queue[0] as { due: number }).due <= now) upstream.write((queue.shift() as { chunk: Buffer }).chunk);
    if (queue.length > 0) timer = setTimeout(flush, (queue[0] as { due: number }).due - now);
    // bounded memory: stop reading while much is held
    if (queue.length < 1_000 && client.isPaused()) client.resume();
  };
  client.on('data', (chunk: Buffer) => {
    if (delayMs === 0 && queue.length === 0) {
      upstream.write(chunk);
      return;
    }
    queue.push({ due: Date.now() + delayMs, chunk });
    if (queue.length >= 1_000) client.pause();
    timer ??= setTimeout(flush, Math.max(0, (queue[0] as { due: number }).due - Date.now()));
  });
  client.on('close', () => {
    if (timer !== null) clearTimeout(timer);
  });
}

async function listen(): Promise<number[]> {
  const ports: number[] = [];
  for (const target of targets) {
    const server = createServer({ noDelay: true }, (client) => pipe(client, target));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    servers.push(server);
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    ports.push(address.port);
  }
  return ports;
}

async function close(): Promise<void> {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
}

const reply = (msg: ProxyReply): void => port.postMessage(msg);

port.on('message', (msg: ProxyRequest) => {
  switch (msg.type) {
    case 'delay':
      delayMs = msg.ms;
      reply({ type: 'done', id: msg.id, value: 0 });
      break;
    case 'connections':
      reply({ type: 'done', id: msg.id, value: sockets.size / 2 });
      break;
    case 'close':
      void close().then(() => reply({ type: 'done', id: msg.id, value: 0 }));
      break;
  }
});

listen().then(
  (ports) => reply({ type: 'listening', ports }),
  (err: unknown) => reply({ type: 'failed', message: (err as Error).message }),
);
