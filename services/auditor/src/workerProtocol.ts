import type { ConnectOptions } from '@muster/bus';
import type { AuditCounts } from './auditFindings.ts';
import type { DecisionsStreamReport, Divergence, Failure } from './auditReport.ts';
import type { HandedWork } from './helper.ts';


/** What the main thread of a parallel audit tells its worker. */
export type ToWorker =
  | {
    type: 'start';
    fromSeq: number;
    /** When given, the worker reads MUSTER_DECISIONS with a connection of its own and compares it with the log (else the main thread does). */
    decisions: ConnectOptions | null;
    /** `Shared` slots (BigInt64), so that neither thread waits for the other's event loop to know how far it is. */
    shared: SharedArrayBuffer;
  }
  /** One transaction of MUSTER_LOG as stored (its own copy of the bytes, transferred), and the work the worker takes over. */
  | { type: 'entry'; seq: number; payload: Uint8Array; work: HandedWork | null }
  /** The main thread read no further: finish (at once when no work is left) and answer with a `result`. */
  | { type: 'end' }
  /** The audit is abandoned: answer nothing. */
  | { type: 'abort' };

/** Slots of the shared array. */
export const Shared = {
  /** The last sequence the worker has folded (and checked). */
  done: 0,
  /** The last sequence handed on with work. */
  lastWork: 1,
  /** 1 once the main thread has handed on everything. */
  ended: 2,
  length: 3,
} as const;

/** The worker's share of an audit: what it re-derived and found. */
export interface WorkerResult {
  counts: AuditCounts;
  failures: Failure[];
  failureCount: number;
  divergence: Divergence | null;
  /** Null when the main thread compared MUSTER_DECISIONS. */
  decisionsStream: DecisionsStreamReport | null;
  decideMs: number;
  ingestMs: number;
}

/** What the worker answers. */
export type FromWorker = { type: 'result'; result: WorkerResult } | { type: 'error'; message: string };
