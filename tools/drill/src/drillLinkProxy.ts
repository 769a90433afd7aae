import { Worker } from 'node:worker_threads';
import type { LinkTarget, ProxyAsk, ProxyReply, ProxyRequest } from './drillLinkProxyProtocol.ts';

export type { LinkTarget } from './drillLinkProxyProtocol.ts';

// The proxies' thread: the built drillLinkProxyWorker.js beside this file; from the sources
// (vitest, tsx), a boot file that registers tsx in the thread first.
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './drillLinkProxyWorkerBoot.js' : './drillLinkProxyWorker.js', import.meta.url);

/**
 * TCP proxies on loopback between the scheduler replicas and the NATS nodes, one listening port
 * per node; the replicas connect through them (`urls`). Pass-through until `delay(ms)` holds
 * every chunk a replica sends for that long (in order) before it goes on to NATS: what `tc qdisc
 * add dev eth0 root netem delay …` on each replica's host does to its traffic to NATS. They run in
 * a thread of their own, so a busy drill process does not slow the replicas' traffic.
 */
export interface LinkProxy {
  /** `nats://127.0.0.1:<port>`, one per target, in the targets' order. */
  readonly urls: string[];
  /** The proxies' listening ports, in the targets' order. */
  readonly ports: number[];
  /** Connections through the proxies right now. */
  connections(): Promise<number>;
  /** Every chunk a replica sends from the answer on waits `ms` before it is forwarded (0: pass-through). */
  delay(ms: number): Promise<void>;
  /** Closes every connection and the proxies, and ends their thread. */
  close(): Promise<void>;
}

// how long the proxies' thread may take to answer before the drill stops waiting for it
const ANSWER_MS = 10_000;

/** Starts one proxy per target on 127.0.0.1, on free ports, in a thread of their own. */
export async function startLinkProxy(targets: readonly LinkTarget[]): Promise<LinkProxy> {
  const worker = new Worker(WORKER_ENTRY, { workerData: { targets } });
  // the drill ends with or without its proxies: they never keep the process alive
  worker.unref();
  const pending = new Map<number, (value: number) => void>();
  let failure: Error | null = null;
  const fail = (err: Error): void => {
    failure ??= err;
    for (const resolve of pending.values()) resolve(Number.NaN);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the link proxies' thread stopped (exit code ${code})`)));
  const ports = await new Promise<number[]>((resolve, reject) => {
    const onMessage = (msg: ProxyReply): void => {
      if (msg.type === 'listening') resolve(msg.ports);
      else if (msg.type === 'failed') reject(new Error(`the link proxies could not listen: ${msg.message}`));
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the link proxies' thread stopped (exit code ${code})`)));
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  worker.on('message', (msg: ProxyReply) => {
    if (msg.type !== 'done') return;
    pending.get(msg.id)?.(msg.value);
    pending.delete(msg.id);
  });
  let nextId = 0;
  const ask = async (request: ProxyAsk): Promise<number> => {
    if (failure !== null) throw failure;
    const id = ++nextId;
    const answer = new Promise<number>((resolve) => pending.set(id, resolve));
    worker.postMessage({ ...request, id } satisfies ProxyRequest);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<number>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the link proxies did not answer ${request.type} within ${ANSWER_MS} ms`)), ANSWER_MS);
    });
    try {
      const value = await Promise.race([answer, late]);
      if (failure !== null) throw failure;
      return value;
    } finally {
      clearTimeout(timer);
      pending.delete(id);
    }
  };
  return {
    urls: ports.map((p) => `nats://127.0.0.1:${p}`),
    ports,
    connections: () => ask({ type: 'connections' }),
    delay: async (ms) => {
      await ask({ type: 'delay', ms });
    },
    close: async () => {
      if (failure === null) await ask({ type: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}
