// A test's own nats-server (or cluster) with muster's streams applied and buses connected to it.
import { connect, ensureStreams } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { NatsAdmin } from './natsAdmin.ts';
import { startNatsCluster, startNatsServer } from './natsServer.ts';
import type { NatsClusterHandle, NatsClusterOptions, NatsServerHandle } from './natsServer.ts';

/** A running server or cluster with muster's streams, a first bus, and a way to add more. */
export interface TestBus {
  /** The first connection. */
  bus: Bus;
  /** A nats.js connection of the test's own, for what muster's operations do not do (inspect, tamper). */
  admin: NatsAdmin;
  urls: string[];
  /** Set for a single server. */
  server: NatsServerHandle | null;
  /** Set for a cluster. */
  cluster: NatsClusterHandle | null;
  /** Another independent connection (a second writer, a standby), closed by `stop()`. */
  client(opts?: { name?: string; servers?: string[]; timeoutMs?: number }): Promise<Bus>;
  /** Closes every connection and stops the servers, removing their data. */
  stop(): Promise<void>;
}

/** Options of `startTestBus`. */
export interface TestBusOptions extends NatsClusterOptions {
  /** Start a cluster of this many nodes (3 for R3 streams) instead of one server. */
  clusterSize?: number;
  /** Apply streams/*.json (default true). */
  ensure?: boolean;
}

/** Starts a nats-server (or cluster) for one test, applies the stream definitions and connects a bus. */
export async function startTestBus(opts: TestBusOptions = {}): Promise<TestBus> {
  const cluster = opts.clusterSize === undefined ? null : await startNatsCluster(opts.clusterSize, opts);
  const server = cluster === null ? await startNatsServer(opts) : null;
  const urls = cluster?.urls ?? [server?.url ?? ''];
  const closers: { close(): Promise<void> }[] = [];
  const client = async (o: { name?: string; servers?: string[]; timeoutMs?: number } = {}): Promise<Bus> => {
    const bus = await connect({ servers: o.servers ?? urls, name: o.name ?? 'muster-test', ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }) });
    closers.push(bus);
    return bus;
  };
  const closeAll = async (): Promise<void> => {
    await Promise.all(closers.map((c) => c.close().catch(() => undefined)));
    await (cluster ?? server)?.stop();
  };
  try {
    const bus = await client({ name: 'muster-test-main' });
    const admin = await NatsAdmin.connect(urls);
    closers.push(admin);
    if (opts.ensure ?? true) await ensureStreams(bus, { replicas: cluster === null ? 1 : Math.min(3, opts.clusterSize ?? 1) });
    return { bus, admin, urls, server, cluster, client, stop: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
