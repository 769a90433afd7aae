import type { Bus } from '@muster/bus';
import type { Input, LoggedTransaction } from '@muster/core';

/** A snapshot as an offline history carries it: the log sequence, its recorded hash, and its state if kept. */
export interface HistorySnapshot {
  seq: number;
  hash: string;
  state?: unknown;
}

/**
 * A log held outside NATS (a recorded golden history, a file): its transactions in order, and
 * optionally the inputs they ingested (to re-derive ingest) and snapshots to verify.
 */
export interface OfflineHistory {
  transactions: AsyncIterable<LoggedTransaction> | Iterable<LoggedTransaction>;
  inputs?: Iterable<Input>;
  snapshots?: HistorySnapshot[];
  /** The last sequence, when known ahead (for progress). */
  lastSeq?: number;
}

/** What `auditLog` and time travel read: a live bus (MUSTER_LOG, MUSTER_IN, MUSTER_DECISIONS) or an offline history. */
export type AuditSource = Bus | OfflineHistory;

/** Whether a source is an offline history rather than a bus. */
export function isOfflineHistory(source: AuditSource): source is OfflineHistory {
  return typeof source === 'object' && source !== null && 'transactions' in source;
}
