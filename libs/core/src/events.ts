import type { Resources } from './resources.ts';
import type { JobSpec, NodeSpec, PolicySpec, QueueSpec } from './contract/types.ts';

// The event catalogue: every fact muster records, one discriminated union (DESIGN.md §3).
// Events are JSON-only data, past tense. `v` marks shapes that may change. The full reference,
// with who emits each event and when, is docs/events.md.

/** Why an input was refused; nothing of it is applied. */
export interface RejectionReason {
  category: 'invalid' | 'duplicate' | 'unknown';
  /** The offending field, dotted (`roles.0.count`); '' for the whole body. */
  path: string;
  message: string;
}

/** Stable reason categories of a `GangAborted` decision (DESIGN.md §4). */
export type AbortCategory =
  | 'insufficient-resources'
  | 'no-matching-hosts'
  | 'placement-unsatisfiable'
  | 'node-lost'
  | 'timeout'
  | 'cancelled'
  | 'reserved'
  | 'runtime-limit'
  | 'quota'
  | 'preempted';

/** Why a gang was not (or is no longer) placed, with a count of hosts per host-level reason. */
export interface AbortReason {
  category: AbortCategory;
  message: string;
  hosts: Record<string, number>;
  /** Served from the unsatisfiable cache without running the allocator. */
  cached?: true;
  /** `preempted`: the job whose commit stopped this gang; `reserved`: the job whose reservation it would delay. */
  by?: string;
  /**
   * A failed attempt of a job with alternatives (DESIGN.md §13): how each variant fared, in order;
   * `category` above is the closest variant's. Absent for any other job.
   */
  alternatives?: AlternativeOutcome[];
}

/** How one variant of a job with alternatives fared in a failed attempt. */
export interface AlternativeOutcome {
  category: AbortCategory;
  /** Hosts per host-level reason, for one member of the variant's heaviest role (empty when cached). */
  hosts: Record<string, number>;
  /** Served from the unsatisfiable cache: this variant's request already failed so in this session. */
  cached?: true;
}

/** Resources of one role on one host, as published in a decision (DESIGN.md §4). */
export interface AllocationResources {
  cpu: number;
  memoryMb: number;
  gpus: number;
}

/** What a committed gang holds on one host for one role. */
export interface Allocation {
  node: string;
  role: string;
  members: number[];
  gpuIds: number[];
  resources: AllocationResources;
}

/**
 * Why an allocation was given back. `member-failed` (contract v1.2): another member of the gang
 * failed, so the gang is stopped whole (its agents get Stops).
 */
export type ReleaseCause = 'completed' | 'cancelled' | 'closed' | 'node-lost' | 'runtime-limit' | 'preempted' | 'member-failed';

/** Where a gang's members meet (DESIGN.md §15), chosen by the core at commit and at every restart. */
export interface Rendezvous {
  node: string;
  address: string;
  port: number;
}

// ---- ingest: facts that came from outside (MUSTER_IN) or from the leader's own observation ----

/** Leader, at takeover: it won the log at `term` (written with the fencing expectation). */
export interface LeaderElected {
  type: 'LeaderElected';
  term: number;
  leader: string;
}

/** Leader, at ingest of `muster.in.node.<id>.register`: a node joined, or came back with this spec. */
export interface NodeRegistered {
  type: 'NodeRegistered';
  v: 1;
  inputSeq: number;
  node: NodeSpec;
}

/** Leader, at ingest of `muster.in.node.<id>.drain`: the node takes no new members. */
export interface NodeDrained {
  type: 'NodeDrained';
  inputSeq: number;
  nodeId: string;
}

/**
 * Leader: a node is gone, by an operator's word (`muster.in.node.<id>.lost`, with `inputSeq`) or
 * because its heartbeats stopped (a fact the leader observed; no `inputSeq`). The releases and
 * aborts of the gangs it held follow in the same transaction.
 */
export interface NodeLost {
  type: 'NodeLost';
  inputSeq?: number;
  nodeId: string;
  cause: 'operator' | 'heartbeat';
}

/** Leader, at ingest of `muster.in.submit`: a valid job was accepted and is pending. */
export interface JobSubmitted {
  type: 'JobSubmitted';
  v: 1;
  inputSeq: number;
  job: JobSpec;
  /** Fingerprint of the request (roles, resources, placement, select), computed once here. */
  fingerprint: string;
  /** A job with alternatives (DESIGN.md §13): each variant's fingerprint, in order (absent for any other job). */
  fingerprints?: string[];
}

/** Leader, at ingest of `muster.in.submit`: the submission was refused; nothing is applied. */
export interface JobRejected {
  type: 'JobRejected';
  inputSeq: number;
  jobId: string | null;
  reason: RejectionReason;
}

/** Leader, at ingest of any other input that is refused (unknown subject, job or node; bad body). */
export interface InputRejected {
  type: 'InputRejected';
  inputSeq: number;
  subject: string;
  reason: RejectionReason;
}

/** Leader, at ingest of `muster.in.cancel`: the job leaves the queue or stops running. */
export interface JobCancelled {
  type: 'JobCancelled';
  inputSeq: number;
  jobId: string;
}

/** Leader, at ingest of `muster.in.close`: a running job (typically kept warm) is released. */
export interface JobClosed {
  type: 'JobClosed';
  inputSeq: number;
  jobId: string;
}

/** Leader, at ingest of `muster.in.node.<id>.done`: a member on that node finished. */
export interface TaskCompleted {
  type: 'TaskCompleted';
  inputSeq: number;
  jobId: string;
  member: number;
  nodeId: string;
  ok: boolean;
  /** The member's exit code, when the agent reported one (contract v1.2). */
  exitCode?: number;
  /** The signal that ended the member, when the agent reported one (contract v1.2). */
  signal?: string;
  /** The attempt of the bind that started the member, when the agent reported it (contract v1.2). */
  attempt?: number;
}

// ---- scheduling: what the leader decided ----

/** Leader, first event of every scheduling session: the reset (clears the unsatisfiable cache). */
export interface SessionStarted {
  type: 'SessionStarted';
  session: number;
  at: number;
  /**
   * Timeouts and runtime limits fell due up to this time, not `at` (present only when that held
   * one back): the leader held them back to when the first input stored and not yet ingested was
   * stored, so a gang whose completion waited in MUSTER_IN is not stopped at its limit
   * (docs/events.md).
   */
  dueBy?: number;
}

/** Leader, in a gang's attempt: a bucket of members claimed this host (provisional until commit). */
export interface HostDebited {
  type: 'HostDebited';
  jobId: string;
  node: string;
  role: string;
  members: number[];
  resources: Resources;
  gpuIds: number[];
}

/** Leader, in a gang's attempt: a debit of a plan that failed later is given back exactly. */
export interface DebitReversed {
  type: 'DebitReversed';
  jobId: string;
  node: string;
  role: string;
  members: number[];
  resources: Resources;
  gpuIds: number[];
}

/** Leader, at commit: one member of the gang is bound to a host (with its GPU device ids). */
export interface MemberBound {
  type: 'MemberBound';
  jobId: string;
  member: number;
  node: string;
  role: string;
  gpuIds: number[];
}

/** Leader, the decision that a whole gang is placed; its debits become the job's allocations. */
export interface GangCommitted {
  type: 'GangCommitted';
  jobId: string;
  session: number;
  at: number;
  allocations: Allocation[];
  /** The index of the variant that committed, for a job with alternatives (DESIGN.md §13); absent for any other job. */
  alternative?: number;
  /** Where the members meet (contract v1.2; absent on logs decided as v1.1). */
  rendezvous?: Rendezvous;
  /** The attempt this commit starts: 1, 2, … after restarts (absent: 0, the first). */
  attempt?: number;
}

/**
 * Leader, in a session: an elastic gang (DESIGN.md §13) changed size. Grown: the new members'
 * `HostDebited` and `MemberBound` come before it (Binds go to their nodes); shrunk by preemption:
 * the `AllocationReleased` (cause `preempted`) of the members it gave up come before it (Stops go
 * to their nodes). `allocations` is the gang's whole allocation after the change, `members` its size now.
 */
export interface GangResized {
  type: 'GangResized';
  jobId: string;
  session: number;
  at: number;
  allocations: Allocation[];
  members: number;
  /** Shrunk: the job whose commit took the members (absent when grown). */
  by?: string;
}

/**
 * Leader, the decision that a gang is not placed (or no longer runs). `final: true` (timeout,
 * cancel) means the job leaves the queue; otherwise it stays pending with this reason.
 */
export interface GangAborted {
  type: 'GangAborted';
  jobId: string;
  session: number;
  at: number;
  final: boolean;
  reason: AbortReason;
}

/** Leader, after a gang lost a node: the job is pending again and its timeout clock restarts. */
export interface JobPended {
  type: 'JobPended';
  jobId: string;
  at: number;
}

/**
 * Leader: every member of a job finished (or a running job was closed); it leaves the cluster.
 * Failed by its gang's failure policy (contract v1.2): the member that failed, its node, exit code
 * or signal, and how many attempts the job made.
 */
export interface JobFinished {
  type: 'JobFinished';
  jobId: string;
  at: number;
  outcome: 'succeeded' | 'failed' | 'closed';
  member?: number;
  node?: string;
  exitCode?: number;
  signal?: string;
  attempts?: number;
}

/**
 * Leader, at ingest of a member's failure (contract v1.2): the gang's failure policy restarts it.
 * Its members' releases come before it in the same transaction; the job is pending again, placed
 * afresh all or nothing no earlier than `notBefore`, and its next commit is `attempt`.
 */
export interface GangRestarting {
  type: 'GangRestarting';
  jobId: string;
  at: number;
  /** The member that failed, and its node. */
  member: number;
  node: string;
  exitCode?: number;
  signal?: string;
  /** The attempt the restart starts (the one that failed plus one). */
  attempt: number;
  notBefore: number;
}

/**
 * The contract a log decides under (DESIGN.md §15): written by a new log's first leader (and the
 * simulator) right after its first PolicySet. A log without it decides as contract v1.1: no
 * rendezvous, no attempts, and a failing member just completes.
 */
export interface ContractSet {
  type: 'ContractSet';
  version: '1.2';
}

/** Leader: part of a job's allocation is given back to its host (completion, cancel, close, loss). */
export interface AllocationReleased {
  type: 'AllocationReleased';
  jobId: string;
  node: string;
  role: string;
  members: number[];
  resources: Resources;
  gpuIds: number[];
  cause: ReleaseCause;
}

/**
 * Leader, in a fact transaction: finished jobs it stops keeping in the state, each finished at
 * least `retainMs` before `at` (the transaction's stamp) and holding nothing. Their ids stay known
 * (a resubmission is still a duplicate) with their outcome; the rest of their story is in the log.
 */
export interface JobsRetired {
  type: 'JobsRetired';
  at: number;
  retainMs: number;
  jobIds: string[];
}

/**
 * The scheduling policy changes (DESIGN.md §11): from an operator's `muster.in.policy` (with
 * `inputSeq`; the fields given replace those in force), or written by the first leader of a new
 * log (and the simulator) with the v1.1 defaults, in a fact transaction of its own. A log with no
 * PolicySet decides under contract v1: no reservations, no runtime limits.
 */
export interface PolicySet {
  type: 'PolicySet';
  inputSeq?: number;
  policy: PolicySpec;
}

/**
 * An operator's `muster.in.queue.<name>.set` (DESIGN.md §12): the queue of that name is created or
 * replaced, in a fact transaction. A log with no QueueSet has every job in the implicit `default` queue.
 */
export interface QueueSet {
  type: 'QueueSet';
  inputSeq: number;
  queue: QueueSpec;
}

/**
 * Session: a blocked job is reserved (DESIGN.md §11): the earliest time `startAt` it is planned to
 * fit from, and the hosts that placement would take. Written only when the job had no reservation
 * or its start or hosts changed. Holds no debit.
 */
export interface GangReserved {
  type: 'GangReserved';
  jobId: string;
  session: number;
  at: number;
  startAt: number;
  hosts: string[];
  /** A job with alternatives (DESIGN.md §13): the variant the reservation is planned for (absent for any other job). */
  alternative?: number;
}

/**
 * Session, or ingest (cancel): a reserved job is no longer reserved: it stopped being one of the
 * first `reserveDepth` blocked jobs (`displaced`), could not be planned to a finite start
 * (`no-start`), the policy turned reservations off (`policy`), or it left the queue (`cancelled`,
 * `timeout`). A commit ends a reservation without this event.
 */
export interface ReservationCleared {
  type: 'ReservationCleared';
  jobId: string;
  session: number;
  reason: 'displaced' | 'no-start' | 'policy' | 'cancelled' | 'timeout';
}

/** Leader, every N transactions: the hash of the canonical state after log sequence `seq`. */
export interface Checkpoint {
  type: 'Checkpoint';
  seq: number;
  stateHash: string;
}

/** Every fact muster records. */
export type SchedulerEvent =
  | LeaderElected
  | NodeRegistered
  | NodeDrained
  | NodeLost
  | JobSubmitted
  | JobRejected
  | InputRejected
  | JobCancelled
  | JobClosed
  | TaskCompleted
  | SessionStarted
  | HostDebited
  | DebitReversed
  | MemberBound
  | GangCommitted
  | GangResized
  | GangAborted
  | JobPended
  | JobFinished
  | JobsRetired
  | AllocationReleased
  | Checkpoint
  | PolicySet
  | QueueSet
  | GangReserved
  | ReservationCleared
  | GangRestarting
  | ContractSet;

/** The `type` tag of every event. */
export type SchedulerEventType = SchedulerEvent['type'];

/** A decision event: what `muster.decision.<jobId>` carries. */
export type Decision = GangCommitted | GangAborted;

/** Whether an event is a gang decision. */
export function isDecision(event: SchedulerEvent): event is Decision {
  return event.type === 'GangCommitted' || event.type === 'GangAborted';
}
