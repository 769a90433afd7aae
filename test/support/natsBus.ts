// A test's own nats-server (or cluster) with muster's streams applied and clients connected to it.
import { connect, ensureStreams, jetStream, jetStreamManager } from '@muster/bus';
import type { JetStreamClient, JetStreamManager, NatsConnection } from '@muster/bus';
import { startNatsCluster, startNatsServer } from './natsServer.ts';
import type { NatsClusterHandle, NatsServerHandle, NatsServerOptions } from './natsServer.ts';

/** One connected client of a test bus. */
export interface BusClient {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** A running server or cluster with muster's streams, a first client, and a way to add more. */
export interface TestBus extends BusClient {
  urls: string[];
  /** Set for a single server. */
  server: NatsServerHandle | null;
  /** Set for a cluster. */
  cluster: NatsClusterHandle | null;
  /** Another independent connection (a second writer, a standby), closed by `stop()`. */
  client(opts?: { name?: string; servers?: string[]; timeoutMs?: number }): Promise<BusClient>;
  /** Closes every client and stops the servers, removing their data. */
  stop(): Promise<void>;
}

/** Options of `startTestBus`. */
export interface TestBusOptions extends NatsServerOptions {
  /** Start a cluster of this many nodes (3 for R3 streams) instead of one server. */
  clusterSize?: number;
  /** Apply streams/*.json (default true). */
  ensure?: boolean;
}

/** Starts a nats-server (or cluster) for one test, applies the stream definitions and connects a client. */
export async function startTestBus(opts: TestBusOptions = {}): Promise<TestBus> {
  const cluster = opts.clusterSize === undefined ? null : await startNatsCluster(opts.clusterSize, opts);
  const server = cluster === null ? await startNatsServer(opts) : null;
  const urls = cluster?.urls ?? [server?.url ?? ''];
  const clients: NatsConnection[] = [];
  const client = async (o: { name?: string; servers?: string[]; timeoutMs?: number } = {}): Promise<BusClient> => {
    const nc = await connect({ servers: o.servers ?? urls, name: o.name ?? 'muster-test' });
    clients.push(nc);
    const timeout = o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs };
    return { nc, js: jetStream(nc, timeout), jsm: await jetStreamManager(nc, timeout) };
  };
  try {
    const first = await client({ name: 'muster-test-main' });
    if (opts.ensure ?? true) await ensureStreams(first.jsm, { replicas: cluster === null ? 1 : Math.min(3, opts.clusterSize ?? 1) });
    return {
      ...first,
      urls,
      server,
      cluster,
      client,
      async stop(): Promise<void> {
        await Promise.all(clients.map((nc) => nc.close().catch(() => undefined)));
        await (cluster ?? server)?.stop();
      },
    };
  } catch (err) {
    await Promise.all(clients.map((nc) => nc.close().catch(() => undefined)));
    await (cluster ?? server)?.stop();
    throw err;
  }
}
