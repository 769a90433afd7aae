import { canonicalHash } from './canonical.ts';
import type { SchedulerEvent } from './events.ts';

/** What a transaction carries: who wrote it and why (DESIGN.md §3, contract v1). */
export type TransactionKind = 'election' | 'ingest' | 'fact' | 'session' | 'checkpoint';

/**
 * One JetStream message on MUSTER_LOG: an ordered list of events that land together or not at all.
 * `prev` is the hash of the previous transaction (null for the first), `at` the stamped time,
 * `part`/`parts` number the transactions of one session (1/1 outside sessions).
 */
export interface Transaction {
  v: 1;
  kind: TransactionKind;
  term: number;
  leader: string;
  at: number;
  prev: string | null;
  session: number;
  part: number;
  parts: number;
  events: SchedulerEvent[];
}

/** The hash of a transaction: SHA-256 of its canonical JSON; the next transaction's `prev`. */
export function transactionHash(tx: Transaction): string {
  return canonicalHash(tx);
}

/** A transaction as read back from the log, with its stream sequence. */
export interface LoggedTransaction {
  seq: number;
  tx: Transaction;
}
