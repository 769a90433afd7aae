import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

/** One NATS node's client address. */
export interface LinkTarget {
  host: string;
  port: number;
}

/**
 * TCP proxies on loopback between the scheduler replicas and the NATS nodes, one listening port
 * per node; the replicas connect through them (`urls`). Pass-through until `delay(ms)` holds
 * every chunk a replica sends for that long (in order) before it goes on to NATS: what `tc qdisc
 * add dev eth0 root netem delay …` on each replica's host does to its traffic to NATS.
 */
export interface LinkProxy {
  /** `nats://127.0.0.1:<port>`, one per target, in the targets' order. */
  readonly urls: string[];
  /** The proxies' listening ports, in the targets' order. */
  readonly ports: number[];
  /** Connections through the proxies right now. */
  connections(): number;
  /** Every chunk a replica sends from now on waits `ms` before it is forwarded (0: pass-through). */
  delay(ms: number): void;
  close(): Promise<void>;
}

/** Starts one proxy per target on 127.0.0.1, on free ports. */
export async function startLinkProxy(targets: readonly LinkTarget[]): Promise<LinkProxy> {
  let delayMs = 0;
  const sockets = new Set<Socket>();
  const servers: Server[] = [];
  const ports: number[] = [];
  const pipe = (client: Socket, target: LinkTarget): void => {
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
  };
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
  return {
    urls: ports.map((p) => `nats://127.0.0.1:${p}`),
    ports,
    connections: () => sockets.size / 2,
    delay: (ms) => {
      delayMs = ms;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
