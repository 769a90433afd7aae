import type { ConnectOptions } from '@muster/bus';
import type { SchedulerEvent, TransactionKind } from '@muster/core';

/** Where a long audit is: the sequence just checked, the last it will check, its rate and what is left. */
export interface AuditProgress {
  seq: number;
  lastSeq: number;
  txPerSec: number;
  etaMs: number;
}

/** Options of `auditLog`. */
export interface AuditOptions {
  /** First sequence to check (default 1); the log before it is replayed (chain verified) but not checked. */
  fromSeq?: number;
  /** Last sequence to check (default: the end of the log when the audit starts). */
  toSeq?: number;
  /** Called a few times a second on long replays. */
  onProgress?(p: AuditProgress): void;
  /**
   * Over NATS, audit the log in two ranges at once: a worker thread audits the log after the
   * stored snapshot nearest the middle of the range, from that snapshot's state, while the main
   * thread audits the log up to it. The worker's findings are taken only when the main thread's
   * replay reaches the snapshot with the state it records (its hash, and its own bytes hashing to
   * its record) and nothing open (a session, a checkpoint mark, GPUs or rendezvous ports held
   * otherwise than the state says) crosses it; else, or when the worker fails, the main thread
   * audits the rest itself. The report is the same either way. Needs `connection` and a snapshot
   * inside the range. `true`: always (a worker is started when none is kept from an earlier audit);
   * `false`: never; left out: with a worker kept from an earlier audit of this process, or when
   * MUSTER_LOG holds `PARALLEL_LOG_BYTES` or more. Ignored offline.
   */
  parallel?: boolean;
  /** How the worker of a parallel audit connects (the options the caller's bus was connected with); left out, the audit runs on one thread. */
  connection?: ConnectOptions;
}

/** A rule of DESIGN.md §7 that a transaction broke. */
export type InvariantRule =
  | 'overcommit'
  | 'gpu-device'
  | 'provisional-debit'
  | 'all-or-nothing'
  | 'committed-twice'
  | 'exact-release'
  /** Contract v1.2 (DESIGN.md §15): a failure's transaction stops every member of the attempt. */
  | 'gang-failure'
  /** Contract v1.2: attempts of a gang follow one another, never overlapping. */
  | 'attempts'
  /** Contract v1.2: a rendezvous port is held by one running gang at a time per node. */
  | 'rendezvous';

/** One broken invariant, after the transaction at `seq`. */
export interface Violation {
  seq: number;
  rule: InvariantRule;
  message: string;
}

/** What kind of check failed. */
export type CheckName =
  | 'chain'
  | 'structure'
  | 'fencing'
  | 'time'
  | 'exactly-once'
  | 'session'
  | 'ingest'
  | 'fact'
  | 'checkpoint'
  | 'snapshot'
  | 'invariant'
  | 'decisions-stream';

/** One failed check, at the log sequence it concerns. */
export interface Failure {
  seq: number;
  check: CheckName;
  message: string;
}

/**
 * The first event where the log and its re-derivation differ: `expected` is what the core derives
 * from the state before the transaction, `actual` what the log holds (null where one side has no
 * event at that position), `path` the first differing field.
 */
export interface Divergence {
  seq: number;
  /** Position of the event in the transaction. */
  index: number;
  kind: TransactionKind;
  session?: number;
  part?: number;
  expected: SchedulerEvent | null;
  actual: SchedulerEvent | null;
  path: string;
  message: string;
}

/** How the decisions on MUSTER_DECISIONS compare with what the log derives. */
export interface DecisionsStreamReport {
  /** False for an offline history: nothing to compare. */
  available: boolean;
  /** Messages the log derives that were found with the same subject and body. */
  checked: number;
  /** Derived but not on the stream, before the last published message (a failure). */
  missing: number;
  /** On the stream under a derived msg id with another subject or body. */
  mismatched: number;
  /** Derived but not yet on the stream, after the last published message (work in flight, not a failure). */
  inFlight: number;
  /** On the stream for an audited log sequence but derived from nothing in the log. */
  unexpected: number;
  /** Stored more than once under one msg id. */
  duplicated: number;
}

/** The outcome of an audit: JSON only. `clean` is true when no check failed. */
export interface AuditReport {
  clean: boolean;
  fromSeq: number;
  lastSeq: number;
  /** Transactions checked (from `fromSeq` to `lastSeq`). */
  transactions: number;
  events: number;
  /** Sessions whose decisions were re-derived, and how many of them a leader's death cut short. */
  sessions: number;
  sessionsCutShort: number;
  /** Decision events (GangCommitted, GangAborted) re-derived and found equal in the log. */
  decisionsRederived: number;
  /** Events re-derived (sessions, ingest, facts) and found equal. */
  eventsRederived: number;
  /** Inputs re-derived from MUSTER_IN, inputs checked for structure only (not available), inputs never ingested. */
  ingest: { rederived: number; structural: number; lost: number };
  checkpoints: { checked: number; failed: number };
  snapshots: { checked: number; failed: number; skipped: number };
  invariants: { checked: number; count: number; violations: Violation[] };
  decisionsStream: DecisionsStreamReport;
  chain: { ok: boolean; brokenAt?: number; message?: string };
  divergence: Divergence | null;
  /** Events that differ from their re-derivation, in all. */
  divergences: number;
  /** The first failures in log order (all checks), and how many there were. */
  failures: Failure[];
  failureCount: number;
  /** Canonical hash of the state after `lastSeq`. */
  stateHash: string;
  /** What the audit could not check, in words (for example inputs that were not available). */
  notes: string[];
  ms: number;
  /** Where the time went, in part: re-deriving sessions, re-deriving inputs, hashing states (checkpoints, snapshots, the final hash). */
  timings: { decideMs: number; ingestMs: number; hashMs: number };
}
