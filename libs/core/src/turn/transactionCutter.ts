import { openTransaction } from '../evolve.ts';
import type { SchedulerEvent } from '../events.ts';
import type { State } from '../state.ts';
import { INGEST_TRANSACTION_BYTES, SESSION_TRANSACTION_BYTES } from '../wire/limits.ts';

// The one place transactions are cut, opened and numbered (DESIGN.md §1): the turn's ingests and
// a session's gangs alike arrive as units (events that must land in one transaction: one input's
// events, a gang's debits, binds and commit, a preemption's releases with its preemptor's commit),
// and a transaction closes before the unit that would bring its events past the byte limit, or
// after the unit that brings it to the event limit. Every transaction leaves the state consistent
// and can be appended.

/** When a transaction closes: its events' JSON stays within `bytes` (one unit never splits), and it closes after the unit that brings it to `events` events. */
export interface TransactionLimits {
  bytes: number;
  events: number;
}

/** An ingest transaction's limits: inputs until the next would overflow INGEST_TRANSACTION_BYTES. */
export const INGEST_LIMITS: TransactionLimits = { bytes: INGEST_TRANSACTION_BYTES, events: Infinity };

/** A session transaction's limits: gangs until the next would overflow SESSION_TRANSACTION_BYTES, or one brings it to 1000 events. */
export const SESSION_LIMITS: TransactionLimits = { bytes: SESSION_TRANSACTION_BYTES, events: 1000 };

/** The stamp a transaction's envelope applies to the state before its events. */
export interface TransactionStamp {
  at: number;
  term: number;
}

/**
 * Opens the transaction after `state`'s last: its sequence is the next, its stamp applied before
 * its events; returns that sequence (the transaction's place in the log: the one place a
 * transaction is numbered).
 */
export function openNext(state: State, stamp: TransactionStamp): number {
  const seq = state.seq + 1;
  openTransaction(state, seq, stamp);
  return seq;
}

/** Cuts a stream of units into transactions under `limits`, opening each on the state as it starts (the caller applies the events). */
export class TransactionCutter {
  /** The transactions cut so far, each its events in order. */
  readonly transactions: SchedulerEvent[][] = [];
  /** The log sequence each transaction was opened at (`openNext`), by the transactions' order. */
  readonly seqs: number[] = [];
  private current: SchedulerEvent[] | null = null;
  // the JSON size of the open transaction's units but those in `unsized`, whose sizes are taken
  // only when a later unit must be checked against the limit (a transaction of one unit, an
  // input's, takes none): the sums compared are those of sizing every unit as it comes
  private bytes = 0;
  private readonly unsized: (readonly SchedulerEvent[])[] = [];

  constructor(
    private readonly limits: TransactionLimits,
    private readonly stamp: TransactionStamp,
  ) {}

  /** Adds one unit, opening a transaction on `state` first when none is open or the unit would overflow the open one; returns the transaction it landed in. */
  add(state: State, unit: readonly SchedulerEvent[]): SchedulerEvent[] {
    let size: number | null = null;
    if (this.current !== null && this.current.length > 0) {
      for (const earlier of this.unsized) this.bytes += JSON.stringify(earlier).length;
      this.unsized.length = 0;
      size = JSON.stringify(unit).length;
      if (this.bytes + size > this.limits.bytes) this.current = null;
    }
    let current = this.current;
    if (current === null) {
      current = [];
      this.current = current;
      this.bytes = 0;
      this.unsized.length = 0;
      this.transactions.push(current);
      this.seqs.push(openNext(state, this.stamp));
    }
    for (const event of unit) current.push(event);
    if (size === null) this.unsized.push(unit);
    else this.bytes += size;
    if (current.length >= this.limits.events) this.current = null;
    return current;
  }
}
