import type { AbortCategory, AbortReason, Allocation, AllocationResources, Rendezvous } from './events.ts';
import type { Resources } from './resources.ts';
import { zeroResources } from './resources.ts';
import { emptyRecord } from './copyOnWrite.ts';
import { emptySharded } from './shard.ts';
import type { Sharded } from './shard.ts';
import type { JobSpec, NodeSpec, Policy, QueueSpec } from './contract/types.ts';
import type { SelectAst } from './select/index.ts';

/**
 * Version of the state's shape: a snapshot of another version is ignored and replay starts at 1.
 * 2: nodes, jobs and pending are tries of arrays (shard.ts), pending holds ids only.
 */
export const STATE_SCHEMA = 2;

/** `up` takes members; `drained` keeps what runs but takes nothing new; `lost` is gone. */
export type NodeStatus = 'up' | 'drained' | 'lost';

/** A node as the scheduler knows it: its spec, status and what is debited on it. */
export interface NodeState {
  spec: NodeSpec;
  status: NodeStatus;
  /** Committed plus provisional use (provisional only inside a transaction). */
  used: Resources;
  /** GPU device ids in use, ascending. */
  gpusUsed: number[];
  /** Members per job bound on this node (for node loss); a prototype-less record (`emptyRecord`). */
  jobs: Record<string, number>;
  /**
   * Rendezvous ports held here by running gangs whose member 0 is here (contract v1.2), ascending;
   * absent when none, so a node of an older log hashes as before.
   */
  rendezvousPorts?: number[];
}

/** Every status a job can have, in the order of its life. */
export const JOB_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'closed', 'cancelled', 'timedout', 'runtime-limit'] as const;

/** Where a job is in its life. */
export type JobStatus = (typeof JOB_STATUSES)[number];

/** One bound member of a running gang. */
export interface MemberState {
  node: string;
  role: string;
  gpuIds: number[];
  done: boolean;
  ok: boolean;
  released: boolean;
}

/** A debit made in the current attempt and not yet committed or reversed. */
export interface ProvisionalDebit {
  node: string;
  role: string;
  members: number[];
  resources: Resources;
  gpuIds: number[];
}

/** A pending job's reservation (GangReserved): when it is planned to start, and on which hosts. */
export interface Reservation {
  startAt: number;
  hosts: string[];
  /** The session that made or last moved it. */
  session: number;
  /** A job with alternatives: the variant it is planned for (absent for any other job). */
  alternative?: number;
}

/** The last failure of a member of a job's gang (contract v1.2): who, where, how, when. */
export interface LastFailure {
  member: number;
  node: string;
  exitCode?: number;
  signal?: string;
  at: number;
}

/** A job as the scheduler knows it. */
export interface JobState {
  spec: JobSpec;
  fingerprint: string;
  /** `select` compiled once at ingest (null: matches every host). */
  selectAst: SelectAst | null;
  status: JobStatus;
  /** Position in submission order (ties in the queue order). */
  submitIndex: number;
  submittedAt: number;
  /** Stamped time the job last became pending (timeouts count from here). */
  pendingSince: number;
  /** State epoch at which it last became pending (a job new since the last session is tried). */
  pendingEpoch: number;
  /** Session that committed the gang, when running or done. */
  session: number | null;
  allocations: Allocation[];
  /** Bound members by index (null until bound). */
  members: (MemberState | null)[];
  provisional: ProvisionalDebit[];
  /** The latest reason it is not placed (pending), or why it ended (cancelled, timed out). */
  pendReason: AbortReason | null;
  finishedAt: number | null;
  /**
   * Stamped time of the commit of the gang running now. Kept only under a policy (contract v1.1):
   * a log without a PolicySet folds and hashes exactly as before.
   */
  committedAt?: number;
  /** The reservation of a blocked pending job (absent: none). */
  reservation?: Reservation;
  /**
   * A job with alternatives (DESIGN.md §13): each variant's fingerprint, in order (absent for any
   * other job, so its state hashes as before).
   */
  fingerprints?: string[];
  /**
   * The variant of a job with alternatives that the gang running now committed (its index);
   * absent while pending and for any other job. `members` has that variant's size only then.
   */
  alternative?: number;
  /**
   * Contract v1.2 (DESIGN.md §15), each absent until set, so older logs hash as before: the
   * attempt the job is on (its next or current commit; absent: 0), the restarts its failure
   * policy counted, the running gang's rendezvous, its last member failure, and while it waits to
   * be restarted, the time before which it is not placed.
   */
  attempt?: number;
  restarts?: number;
  rendezvous?: Rendezvous;
  lastFailure?: LastFailure;
  notBefore?: number;
}

/** A finished job the state no longer keeps in full (JobsRetired): its id, outcome and end. */
export interface RetiredJob {
  spec: { id: string };
  status: JobStatus;
  finishedAt: number;
}

/** Allocated resources per user and per queue (the numerators of DRF shares); prototype-less records. */
export interface Usage {
  users: Record<string, AllocationResources>;
  queues: Record<string, AllocationResources>;
}

/** The whole scheduler state: a pure function of the log. */
export interface State {
  schema: number;
  /** Log sequence of the last folded transaction (0: none). */
  seq: number;
  /** Latest stamped time seen. */
  lastAt: number;
  /** MUSTER_IN sequence of the last ingested input (the leader resumes at +1). */
  lastInputSeq: number;
  term: number;
  leader: string | null;
  /** Number of the last session started. */
  session: number;
  /** Bumped by every fact that could change a scheduling outcome. */
  epoch: number;
  /** Epoch of the latest change that could free capacity (release, node joining). */
  freeEpoch: number;
  /** Epoch when the last session started. */
  sessionEpoch: number;
  nextSubmitIndex: number;
  nodes: Sharded<NodeState>;
  jobs: Sharded<JobState>;
  /**
   * Finished jobs retired from `jobs`. Absent until the first JobsRetired, so that a log without
   * one folds (and hashes) exactly as it did before retirement existed.
   */
  retired?: Sharded<RetiredJob>;
  /**
   * Ids of the running gangs with a runtime limit (under a policy), so a session finds the limits
   * due without reading every job. Absent until the first such gang.
   */
  limited?: Sharded<string>;
  /** Ids of the pending jobs (the queue order is on each job: priority, submitIndex). */
  pending: Sharded<string>;
  usage: Usage;
  /** Capacity of up nodes (the denominators of DRF shares). */
  capacity: Resources;
  /** Unsatisfiable cache: request key → reason category; cleared at every SessionStarted. */
  unsatisfiable: Record<string, AbortCategory>;
  lastCheckpoint: { seq: number; stateHash: string } | null;
  /**
   * The policy in force (DESIGN.md §11). Absent until the first PolicySet: such a log decides
   * under contract v1 (no reservations, no runtime limits) and folds and hashes as it always did.
   */
  policy?: Policy;
  /**
   * The queue tree (DESIGN.md §12): specs by name, prototype-less. Absent until the first
   * QueueSet: every job is then in the implicit `default` queue, as in contract v1.
   */
  queues?: Record<string, QueueSpec>;
  /**
   * Ids of running gangs still within the policy's minimum runtime before preemption (made on the
   * first commit under a guard; a session at or after a gang's guard expiry takes it out).
   */
  guarded?: Sharded<string>;
  /**
   * Ids of the running elastic gangs below their full size (DESIGN.md §13), which a session may
   * grow. Absent until the first such gang.
   */
  elastic?: Sharded<string>;
  /**
   * Decayed use per queue name (DESIGN.md §12, `policy.fairShareHalfLifeMs`): the resource-time
   * integral, decayed with the half-life, as of `at`; advanced whenever the queue's use changes.
   * Absent until a policy names a half-life. Prototype-less.
   */
  decayed?: Record<string, DecayedUse>;
  /**
   * The contract the log decides under when later than v1.1 (`ContractSet`, DESIGN.md §15):
   * '1.2' gives gangs rendezvous, attempts and failure policies. Absent on older logs.
   */
  contract?: '1.2';
  /** Ids of the jobs waiting out a restart's backoff (`notBefore`, contract v1.2). Absent until the first. */
  restarting?: Sharded<string>;
}

/** A queue's decayed resource-time (resource × ms) as of stamped time `at`. */
export interface DecayedUse {
  cpu: number;
  memoryMb: number;
  gpus: number;
  at: number;
}

/** The state before any event. */
export function initialState(): State {
  return {
    schema: STATE_SCHEMA,
    seq: 0,
    lastAt: 0,
    lastInputSeq: 0,
    term: 0,
    leader: null,
    session: 0,
    epoch: 0,
    freeEpoch: 0,
    sessionEpoch: 0,
    nextSubmitIndex: 0,
    nodes: emptySharded(),
    jobs: emptySharded(),
    pending: emptySharded(),
    usage: { users: emptyRecord(), queues: emptyRecord() },
    capacity: zeroResources(),
    unsatisfiable: emptyRecord(),
    lastCheckpoint: null,
  };
}
