import type { DecisionsStreamReport, Divergence, Failure } from './auditReport.ts';
import type { LogAuditor } from './logAuditor.ts';

/** How the worker of a parallel audit reaches NATS: the servers and credentials of the audit's own connection. */
export interface WorkerConnection {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
  inboxPrefix?: string;
  /** Milliseconds for JetStream API calls (the audit's client's timeout). */
  timeoutMs: number;
}

/** What the main thread of a parallel audit tells its worker. */
export type ToWorker =
  /** `decisions`: whether the worker (rather than the main thread) compares MUSTER_DECISIONS. */
  | {
    type: 'start';
    connection: WorkerConnection;
    fromSeq: number;
    decisions: boolean;
    /** One BigInt64 the worker sets to the last sequence it has done: how far behind it is, readable without a message. */
    progress: SharedArrayBuffer;
  }
  /**
   * One transaction of MUSTER_LOG as stored (its own copy of the bytes, transferred); `rederive`:
   * the worker (not the main thread) re-derives the session this transaction starts.
   */
  | { type: 'entry'; seq: number; payload: Uint8Array; rederive: boolean }
  /** The main thread read no further: finish and answer with a `result`. */
  | { type: 'end' }
  /** The audit is abandoned: stop reading, answer nothing. */
  | { type: 'abort' };

/** The worker's share of an audit: inputs re-derived, MUSTER_DECISIONS compared. */
export interface WorkerResult {
  counts: LogAuditor['counts'];
  failures: Failure[];
  failureCount: number;
  divergence: Divergence | null;
  /** Null when the main thread compared MUSTER_DECISIONS. */
  decisionsStream: DecisionsStreamReport | null;
  ingestMs: number;
  decideMs: number;
  /** The worker's own milliseconds from `start` to `result`, and of them waiting for messages. */
  busyMs: number;
}

/** What the worker answers. */
export type FromWorker = { type: 'result'; result: WorkerResult } | { type: 'error'; message: string };
