import { isDecision } from '@muster/core';
import type { SchedulerEvent, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import type { CheckName, Divergence } from './auditReport.ts';
import { firstDifference, sameJson } from './eventDiff.ts';

/**
 * Compares re-derived events with the log's and reports where they part: each divergence as a
 * failure of the transaction's check, the earliest also as the report's `divergence`.
 */
export class DivergenceReport {
  /** The first divergence found (the earliest, once another thread's is offered). */
  first: Divergence | null = null;

  constructor(private readonly findings: AuditFindings) {}

  /** Compares re-derived events (null: not re-derivable, already reported) with the log's events `from`..`to` of `tx`; counts what matched; whether all did. */
  compare(seq: number, tx: Transaction, derived: readonly SchedulerEvent[] | null, from: number, to: number): boolean {
    if (derived === null) return false;
    const events = tx.events;
    const n = Math.max(derived.length, to - from);
    for (let k = 0; k < n; k++) {
      const expected = derived[k] ?? null;
      const actual = from + k < to ? events[from + k]! : null;
      if (expected === null || actual === null || !sameJson(expected, actual)) {
        this.diverge(seq, tx, from + k, expected, actual);
        return false;
      }
    }
    this.findings.counts.eventsRederived += derived.length;
    for (const e of derived) if (isDecision(e)) this.findings.counts.decisionsRederived++;
    return true;
  }

  /** Reports a divergence of a transaction as a whole (its re-derivation failed), at its first event. */
  whole(seq: number, tx: Transaction, message: string): void {
    this.record(seq, tx, 0, null, tx.events[0] ?? null, '', message);
  }

  /** Keeps another thread's first divergence when it comes before this one's. */
  offer(theirs: Divergence | null): void {
    const mine = this.first;
    if (theirs !== null && (mine === null || theirs.seq < mine.seq || (theirs.seq === mine.seq && theirs.index < mine.index))) this.first = theirs;
  }

  private diverge(seq: number, tx: Transaction, index: number, expected: SchedulerEvent | null, actual: SchedulerEvent | null): void {
    const what = transactionName(tx);
    const path = expected === null || actual === null ? '' : (firstDifference(expected, actual) ?? '');
    const other = otherSubmission(expected, actual);
    const message = expected === null
      ? `event ${index} of ${what} at ${seq} (${actual?.type}) does not follow from the state before it`
      : actual === null
        ? `${what} at ${seq} lacks event ${index} (${expected.type}) that follows from the state before it`
        : other !== null
          ? `event ${index} of ${what} at ${seq} ingested ${other}: MUSTER_IN no longer holds what the leader read there (the stream lost or wrote over a stored message), so this and later ingests are not re-derived from the leader's inputs`
          : `event ${index} of ${what} at ${seq} differs from its re-derivation${path === '' ? '' : ` at ${path}`}`;
    this.record(seq, tx, index, expected, actual, path, message);
  }

  private record(seq: number, tx: Transaction, index: number, expected: SchedulerEvent | null, actual: SchedulerEvent | null, path: string, message: string): void {
    this.findings.counts.divergences++;
    const check: CheckName = tx.kind === 'session' ? 'session' : tx.kind === 'fact' ? 'fact' : 'ingest';
    this.findings.fail(seq, check, message);
    if (this.first !== null) return;
    this.first = {
      seq,
      index,
      kind: tx.kind,
      ...(tx.kind === 'session' ? { session: tx.session, part: tx.part } : {}),
      expected,
      actual,
      path,
      message,
    };
  }
}

/** How messages name a transaction: `session S part P`, or `KIND transaction`. */
export function transactionName(tx: Transaction): string {
  return tx.kind === 'session' ? `session ${tx.session} part ${tx.part}` : `${tx.kind} transaction`;
}

/**
 * When a logged submission and its re-derivation are of different jobs, what each says (`job X as
 * input N, where MUSTER_IN now holds job Y`): the input itself differs, not what the core made of it.
 */
function otherSubmission(expected: SchedulerEvent | null, actual: SchedulerEvent | null): string | null {
  if (expected?.type !== 'JobSubmitted' || actual?.type !== 'JobSubmitted' || expected.job.id === actual.job.id) return null;
  return `job ${actual.job.id} as input ${actual.inputSeq}, where MUSTER_IN now holds job ${expected.job.id}`;
}
