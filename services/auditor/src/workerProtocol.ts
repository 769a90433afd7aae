import type { ConnectOptions } from '@muster/bus';
import type { AuditCounts } from './auditFindings.ts';
import type { DecisionsStreamReport, Divergence, Failure, Violation } from './auditReport.ts';
import type { ChainBreak } from './chainVerifier.ts';
import type { DeferredCheckpoint } from './checkpointCheck.ts';

/** The later range of a parallel audit: the log after a stored snapshot, audited from that snapshot's state. */
export interface LaterRange {
  /** The stored snapshot the range starts from, and the log sequence it is at (the range is `seq + 1` on). */
  snapshot: string;
  seq: number;
  /** The last sequence to audit (the log's last when the audit began, or the caller's bound). */
  toSeq: number;
  /** The sequences of the other stored snapshots in the range (the replayed state is hashed there). */
  snapshots: number[];
  /** How the worker connects: the options the caller's bus was connected with. */
  connection: ConnectOptions;
}

/** What the main thread of a parallel audit tells its worker. */
export type ToWorker =
  /** Audit this range and answer with a `result`. */
  | { type: 'start'; range: LaterRange }
  /** The audit does not need the range any more (the main thread audits it): answer nothing. */
  | { type: 'abort' };

/** What the worker found in its range, for the main thread to add to its own findings. */
export interface RangeResult {
  counts: AuditCounts;
  failures: Failure[];
  failureCount: number;
  divergence: Divergence | null;
  invariants: { checked: number; count: number; violations: Violation[] };
  chainBreak: ChainBreak | null;
  /** Checkpoints naming a state before the range (a mark the main thread holds). */
  deferredCheckpoints: DeferredCheckpoint[];
  /** The last sequence folded, and whether the read stopped early at a transaction it could not fold or read. */
  lastSeq: number;
  readFailed: boolean;
  /** The replayed state's hash at each stored snapshot of the range, and at its end. */
  snapshotHashes: [number, string][];
  stateHash: string;
  decisionsStream: DecisionsStreamReport;
  timings: { decideMs: number; ingestMs: number; hashMs: number };
}

/** What the worker answers. */
export type FromWorker = { type: 'result'; result: RangeResult } | { type: 'error'; message: string };
