import type { Logger } from 'pino';
import { SHRINK_CONFIRM_MS } from './logShrinkWatch.ts';

/** Options of one scheduler replica. */
export interface SchedulerOptions {
  /** NATS url(s). */
  natsUrl: string | string[];
  /** This replica's id (distinct per replica; shows in the lease and in LeaderElected). */
  id: string;
  logger: Logger;
  /** NATS credentials (deployments with users and permissions). */
  user?: string;
  pass?: string;
  /** A standby takes over after seeing no lease refresh for this long (ms, monotonic clock). */
  leaseMs?: number;
  /** A node silent this long is appended as lost (ms); 0 disables the check. */
  heartbeatTimeoutMs?: number;
  /** A Checkpoint every this many transactions. */
  checkpointEvery?: number;
  /** A snapshot every this many transactions; 0 disables snapshots. */
  snapshotEvery?: number;
  /**
   * Also a snapshot once this many events were folded since the last one (default 50,000; 0: by
   * transactions only): a rebuild replays events, and a leader behind on a backlog writes few
   * large transactions (a turn of up to 1024 inputs), so counting transactions alone let a 200 gangs/s
   * drill run 3,000 transactions and 150,000 events without one (a restarted replica replayed them all, 18 s).
   */
  snapshotEveryEvents?: number;
  /** Stream replicas (1 on one server, 3 on a cluster). */
  replicas?: number;
  /**
   * A finished job stays in the state (for `muster jobs`, `explain`) this long after it ended, then
   * the leader retires it (JobsRetired): its id and outcome stay known, its story is in the log.
   */
  retainFinishedMs?: number;
  /**
   * Most buffered inputs one turn ingests before its session (default 1024). Every session tries the
   * pending jobs, so a turn that takes few inputs of a backlog pays a whole session for each few:
   * at 200 gangs/s, 256 a turn ingested about 600 inputs a second behind a backlog; 4096 made turns
   * of 2-4 s whose decisions waited for all of it (gaps over 10 s).
   */
  maxBatchInputs?: number;
  /** Wall clock for stamping transactions (tests may pass their own). */
  wallClock?: () => number;
  /** The monotonic clock a leader's stamps are held to (StampClock); a test that drives `wallClock` passes the same clock here. */
  stampMonotonic?: () => number;
  /** Serve Prometheus metrics on this port (`GET /metrics`); 0 (the default) serves none. */
  metricsPort?: number;
  /** The address the metrics endpoint binds (default 127.0.0.1: loopback only). */
  metricsHost?: string;
  /**
   * How long evidence that MUSTER_LOG lost acknowledged writes (its end went backwards, or a
   * decision on MUSTER_DECISIONS it no longer backs) must stand before the replica refuses to lead
   * for good (ms; default 30 s, longer than a deposed stream leader's stale answers last).
   */
  logLossConfirmMs?: number;
  /**
   * Every this many ms the replica applies the stream and bucket definitions again, so one deleted
   * or lost under a running cluster is created again (said at error); 0: only at start (default 5 s).
   */
  streamCheckMs?: number;
  /** A start (connect, streams, rebuild) that takes longer than this says at warn where it is, and again as often (ms; default 15 s). */
  startupReportMs?: number;
}

/** The options with every default filled in. */
export type ResolvedOptions = Required<Omit<SchedulerOptions, 'user' | 'pass'>> & Pick<SchedulerOptions, 'user' | 'pass'>;

/** Fills in defaults. */
export function resolveOptions(opts: SchedulerOptions): ResolvedOptions {
  return {
    leaseMs: 600,
    heartbeatTimeoutMs: 15_000,
    checkpointEvery: 1000,
    snapshotEvery: 5000,
    snapshotEveryEvents: 50_000,
    retainFinishedMs: 300_000,
    replicas: 1,
    maxBatchInputs: 1024,
    wallClock: () => Date.now(),
    stampMonotonic: monotonicMs,
    metricsPort: 0,
    metricsHost: '127.0.0.1',
    logLossConfirmMs: SHRINK_CONFIRM_MS,
    startupReportMs: 15_000,
    streamCheckMs: 5_000,
    ...opts,
  };
}

/** Milliseconds on a monotonic clock (never trusts wall clocks between machines). */
export function monotonicMs(): number {
  return performance.now();
}
