import { SCHEDULER_FLAGS } from '@muster/scheduler/flags';
import { nodesForRate } from './drillCapacity.ts';
import { ALL_FAULT_KINDS, FAULT_KINDS } from './faults/index.ts';
import type { FaultKind } from './faults/index.ts';

/** `sequential`: one fault at a time with recovery between; `chaotic`: faults at random times from a seeded PRNG. */
export type DrillSchedule = 'sequential' | 'chaotic';

/** What a drill runs and how hard. */
export interface DrillOptions {
  /** Seconds of workload under faults. */
  durationS: number;
  schedule: DrillSchedule;
  /** Sequential: seconds of quiet between one fault's recovery and the next; chaotic: mean seconds between faults. */
  faultEveryS: number;
  /** Seeds the workload and the fault schedule. */
  seed: number;
  /** The kinds of fault to inject (sequential cycles through them in this order). */
  faults: readonly FaultKind[];
  /** Gang submissions per second. */
  rate: number;
  /** Simulated nodes (sim-1 … sim-N, run by agents in the drill's process); by default scaled from `rate` so the offered load is about 65 % of capacity (`nodesForRate`). */
  nodes: number;
  /** Scheduler replicas' lease: a standby takes over after this long without a refresh. */
  leaseMs: number;
  heartbeatTimeoutMs: number;
  /** How long a paused (SIGSTOP) leader stays paused; longer than the lease. */
  pauseMs: number;
  /** How long a killed NATS node stays down before it is restarted. */
  natsDownMs: number;
  /** fast-clock: how far ahead the replica's wall clock runs (faketime), and how long it leads before it is restarted with a true clock. */
  clockAheadMs: number;
  fastLeadMs: number;
  /** full-disk: how long one NATS node's store stays full, and the tmpfs's room beyond the store before it is filled (MB). */
  diskFullMs: number;
  /** partition-leader: how long the leader is cut off from NATS (longer than the lease). */
  partitionMs: number;
  /** partition-nats: how long one NATS node is cut off from the other two (longer than its raft election timeout). */
  natsPartitionMs: number;
  diskHeadroomMb: number;
  /**
   * full-disk: how the node comes back once freed. `empty-store` (the default): killed, its
   * JetStream store discarded, restarted empty to catch up from its peers (an operator's recovery
   * from a disk failure). `same-store`: killed and restarted on the store the full disk left, moved
   * back to disk (what lost acknowledged writes on nats-server 2.9.10; kept to measure it).
   */
  diskRecovery: 'empty-store' | 'same-store';
  /** slow-network: how long every replica's traffic to NATS is slowed, by how much (ms a chunk waits), and the share of its packets dropped. */
  slowMs: number;
  slowDelayMs: number;
  slowLoss: number;
  /** Longest acceptable time with pending work that fits and no decision. */
  livenessBoundMs: number;
  /** Longest a replica may go without answering its status while another answers before the drill names it and fails. */
  silentBoundMs: number;
  /** Longest wait, after the workload, for every accepted job to finish and the replicas to agree. */
  settleTimeoutMs: number;
  /** Keep every log (NATS nodes, replicas, agents) in this folder. */
  keepLogsDir: string | null;
  /** pino level of the replicas (their lease and election lines, at info, time a takeover's split). */
  logLevel: string;
  /** pino level of the simulated agents (at info they log every member started and finished). */
  agentLogLevel: string;
}

/** The defaults: `muster drill` with no flags. */
export function drillDefaults(): DrillOptions {
  return {
    durationS: 120,
    schedule: 'sequential',
    faultEveryS: 8,
    seed: 1,
    faults: FAULT_KINDS,
    rate: 4,
    nodes: nodesForRate(4),
    leaseMs: Number(SCHEDULER_FLAGS.find((f) => f.option === 'leaseMs')?.default),
    heartbeatTimeoutMs: 5_000,
    pauseMs: 2_500,
    natsDownMs: 3_000,
    clockAheadMs: 3_600_000,
    fastLeadMs: 4_000,
    diskFullMs: 6_000,
    partitionMs: 3_000,
    natsPartitionMs: 8_000,
    diskHeadroomMb: 16,
    diskRecovery: 'empty-store',
    slowMs: 10_000,
    slowDelayMs: 200,
    slowLoss: 0.05,
    livenessBoundMs: 10_000,
    // a restarted replica answers once it has rebuilt: seconds, even an hour into a soak
    silentBoundMs: 30_000,
    settleTimeoutMs: 60_000,
    keepLogsDir: null,
    logLevel: 'info',
    agentLogLevel: 'info',
  };
}

/** The defaults overridden by `partial`; throws a RangeError naming the first bad option. */
export function resolveDrillOptions(partial: Partial<DrillOptions>): DrillOptions {
  const given = stripUndefined(partial);
  const opts = { ...drillDefaults(), ...given };
  // the cluster grows with the offered rate unless the caller sized it
  if (given.nodes === undefined && typeof opts.rate === 'number' && opts.rate > 0) opts.nodes = nodesForRate(opts.rate);
  const positive: (keyof DrillOptions)[] = ['durationS', 'faultEveryS', 'rate', 'nodes', 'leaseMs', 'pauseMs', 'natsDownMs', 'clockAheadMs', 'fastLeadMs', 'diskFullMs', 'diskHeadroomMb', 'partitionMs', 'natsPartitionMs', 'slowMs', 'slowDelayMs', 'slowLoss', 'livenessBoundMs', 'silentBoundMs', 'settleTimeoutMs'];
  for (const key of positive) {
    const value = opts[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new RangeError(`${key} must be a positive number, got ${String(value)}`);
  }
  // one node of each kind (CPU, A100, H100), so every job of the mix fits the empty cluster
  if (!Number.isInteger(opts.nodes) || opts.nodes < 3) throw new RangeError(`nodes must be an integer of at least 3, got ${opts.nodes}`);
  if (!Number.isInteger(opts.seed)) throw new RangeError(`seed must be an integer, got ${opts.seed}`);
  if (opts.diskRecovery !== 'empty-store' && opts.diskRecovery !== 'same-store') throw new RangeError(`diskRecovery must be empty-store or same-store, got ${String(opts.diskRecovery)}`);
  if (opts.schedule !== 'sequential' && opts.schedule !== 'chaotic') throw new RangeError(`schedule must be sequential or chaotic, got ${String(opts.schedule)}`);
  for (const f of opts.faults) if (!ALL_FAULT_KINDS.includes(f)) throw new RangeError(`unknown fault ${f} (one of ${ALL_FAULT_KINDS.join(', ')})`);
  // a pause no longer than the lease is not a failover: the leader would keep its lease
  if (opts.pauseMs <= opts.leaseMs) throw new RangeError(`pauseMs (${opts.pauseMs}) must be longer than leaseMs (${opts.leaseMs})`);
  if (opts.slowLoss >= 1) throw new RangeError(`slowLoss must be below 1, got ${opts.slowLoss}`);
  if (opts.partitionMs <= opts.leaseMs) throw new RangeError(`partitionMs (${opts.partitionMs}) must be longer than leaseMs (${opts.leaseMs})`);
  return opts;
}

function stripUndefined(partial: Partial<DrillOptions>): Partial<DrillOptions> {
  return Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<DrillOptions>;
}
