import { JETSTREAM_LEAVE_MS, connect, ensureStreams, isBusError, lastLogSequence, openLeaderLease, serverFeatures } from '@muster/bus';
import { ApiServer } from './apiServer.ts';
import { ConnectionChanges } from './connectionChanges.ts';
import type { CountedConnection } from './connectionChanges.ts';
import { resolveOptions } from './config.ts';
import type { ResolvedOptions, SchedulerOptions } from './config.ts';
import { HeartbeatMonitor } from './heartbeatMonitor.ts';
import { serveMetrics } from './metricsServer.ts';
import type { MetricsServer } from './metricsServer.ts';
import { SchedulerMetrics } from './schedulerMetrics.ts';
import { Replica, standbyRequestMs } from './replica.ts';
import { serveStatus } from './statusResponder.ts';
import { StartupWatch } from './startupWatch.ts';
import { StreamWatch } from './streamWatch.ts';
import type { Role } from './replica.ts';
import type { Bus, ConnectionChange } from '@muster/bus';
import type { State } from '@muster/core';
import type { Logger } from 'pino';

/** A running scheduler replica. */
export interface SchedulerHandle {
  /** Leader, standby, or stopped. */
  role(): Role;
  /** The state this replica has folded (for tests and the embedded stack). */
  state(): State;
  /** Where its Prometheus metrics are served (`http://127.0.0.1:9464/metrics`), or null when off. */
  metricsUrl: string | null;
  /** Finishes the transaction in flight, gives up the lease if held, closes the connection. */
  stop(): Promise<void>;
}

/**
 * Starts one scheduler replica (`muster scheduler`): connects, applies the stream definitions,
 * rebuilds from snapshot plus tail, serves the read API, and leads or stands by.
 */
export async function startScheduler(options: SchedulerOptions): Promise<SchedulerHandle> {
  const opts = resolveOptions(options);
  const log = opts.logger.child({ replica: opts.id });
  const startup = new StartupWatch(log, opts.startupReportMs);
  try {
    return await start(opts, log, startup);
  } finally {
    // serving or failed: no more reports
    startup.done();
  }
}

// What startScheduler does, telling `startup` each step.
async function start(opts: ResolvedOptions, log: Logger, startup: StartupWatch): Promise<SchedulerHandle> {
  const heartbeats = new HeartbeatMonitor(opts.heartbeatTimeoutMs);
  const changes = new ConnectionChanges();
  const connectAs = (name: string, counted: CountedConnection, heard?: (change: ConnectionChange) => void) =>
    connect({
      servers: opts.natsUrl,
      name,
      // a replica leaves a NATS node that cannot serve JetStream (cut off from its peers, its disk full) for one that can
      jetStreamLeaveMs: JETSTREAM_LEAVE_MS,
      ...(opts.user === undefined ? {} : { user: opts.user, pass: opts.pass ?? '' }),
      onConnection: (change) => {
        log.warn({ connection: name, kind: change.kind, server: change.server }, change.what);
        changes.heard(counted, change);
        heard?.(change);
      },
    });
  // heartbeats arrive on this connection: silence while it is away from NATS is not a node's
  const bus = await connectAs(`muster-scheduler-${opts.id}`, 'main', (change) => heartbeats.connection(change));
  // appends are fenced by sequence alone, one message at a time, on every server; a 2.12+ server
  // could take a turn as one atomic batch (not used yet: docs/scheduler.md)
  log.info({ nats: serverFeatures(bus) }, 'connected');
  let bulk: Bus | null = null;
  try {
    startup.phase('applying the stream definitions');
    await retry(() => ensureStreams(bus, { replicas: opts.replicas }), log);
    startup.phase('opening the lease');
    // lease calls wait no longer than a lease: a standby must not sit out a takeover on one timeout
    const lease = await openLeaderLease(bus.withTimeout(Math.max(500, opts.leaseMs)));
    const standbyLease = await openLeaderLease(bus.withTimeout(standbyRequestMs(opts.leaseMs)));
    heartbeats.start(bus);
    startup.phase('connecting for snapshots');
    bulk = await connectAs(`muster-scheduler-${opts.id}-snapshots`, 'snapshots');
    let metrics: SchedulerMetrics | null = null;
    const replica = new Replica({ bus, bulkBus: bulk, lease, standbyLease, heartbeats, opts, log, startup, onSession: (seconds) => metrics?.sessionRan(seconds) });
    // answered from here on (role 'starting' while it rebuilds): a replica whose rebuild a NATS fault
    // slows is not one that stopped answering, which a drill names
    const statusSubs = serveStatus(bus, opts.id, replica);
    await replica.start();
    const streams = new StreamWatch(bus, opts.replicas, opts.streamCheckMs, log.child({ component: 'streams' }));
    streams.start();
    startup.phase('serving');
    let metricsServer: MetricsServer | null = null;
    if (opts.metricsPort > 0) {
      // counted from here on: the rebuild's replay is history, not this replica's live decisions
      metrics = new SchedulerMetrics(opts.id, {
        isLeader: () => replica.role() === 'leader',
        state: () => replica.state,
        lastLogSequence: () => lastLogSequence(bus),
        connectionChanges: () => changes.entries(),
      });
      const m = metrics;
      replica.ledger.onAdopted = (txs, state) => m.folded(txs, state);
      metricsServer = await serveMetrics(metrics.registry, { host: opts.metricsHost, port: opts.metricsPort }).catch(async (err: unknown) => {
        await streams.stop();
        await replica.stop();
        heartbeats.stop();
        throw new Error(`cannot serve metrics on ${opts.metricsHost}:${opts.metricsPort}: ${(err as Error).message}`, { cause: err });
      });
      log.info({ url: metricsServer.url }, 'serving metrics');
    }
    const api = new ApiServer(bus, () => replica.state, log.child({ component: 'api' }));
    api.start();
    let stopping: Promise<void> | null = null;
    return {
      role: () => replica.role(),
      state: () => replica.state,
      metricsUrl: metricsServer?.url ?? null,
      stop: () =>
        (stopping ??= (async () => {
          await metricsServer?.close();
          for (const sub of statusSubs) sub.unsubscribe();
          await api.stop();
          await streams.stop();
          await replica.stop();
          heartbeats.stop();
          await Promise.all([bus, bulk].map((c) => c?.drain().catch(() => c.close())));
          log.info('stopped');
        })()),
    };
  } catch (err) {
    await Promise.all([bus.close(), bulk?.close()]);
    throw err;
  }
}

/** Retries a start-up step while JetStream is not ready yet (a cluster electing), for up to a minute. */
async function retry<T>(step: () => Promise<T>, log: Logger): Promise<T> {
  const deadline = performance.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      // a definition that would drop stored messages stays so: waiting cannot change it
      if (performance.now() > deadline || isBusError(err, 'UNSAFE_STREAM_UPDATE')) throw err;
      log.warn({ err, attempt }, 'start-up step failed: retrying');
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * attempt)));
    }
  }
}
