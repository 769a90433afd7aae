import { payloadHash } from '@muster/bus';
import { TurnContext, turnEvents } from '@muster/core';
import type { SchedulerEvent, State, Transaction, TurnCommand } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import { DivergenceReport, transactionName } from './divergenceReport.ts';

/** Re-derives what the leader wrote with the core's own turn on the state before it, and reports where the log differs. */
export class Rederiver {
  /** Where the log differs from its re-derivation. */
  readonly divergences: DivergenceReport;
  // the turn re-derives what the leader wrote; its caches are this auditor's
  private readonly context = new TurnContext({ digest: payloadHash });

  constructor(findings: AuditFindings) {
    this.divergences = new DivergenceReport(findings);
  }

  /**
   * The events the core's turn writes on `state` for `commands`, stamped as `tx` was: one list per
   * transaction; null when the turn threw. The core throws only on a state no log it wrote can
   * lead to (a log written again over another history folds to one: docs/drills.md, the 15-minute
   * soak), so that is reported as a divergence at `seq`, and the audit goes on.
   */
  parts(seq: number, state: State, tx: Transaction, commands: TurnCommand[]): SchedulerEvent[][] | null {
    try {
      // events only: the auditor compares events, so nothing is chained or encoded
      return turnEvents(this.context, state, commands, { term: tx.term, leader: tx.leader, at: tx.at });
    } catch (err) {
      this.divergences.whole(seq, tx, `${transactionName(tx)} at ${seq} cannot be re-derived: the core threw on the state before it (${(err as Error).message}), a state no log the core wrote leads to`);
      return null;
    }
  }

  /** The events the turn writes for `commands` on `state`, as one list (null when it threw). */
  events(seq: number, state: State, tx: Transaction, commands: TurnCommand[]): SchedulerEvent[] | null {
    return this.parts(seq, state, tx, commands)?.flat() ?? null;
  }

  /** Re-derives `commands` on `state` and compares the result with the log's events `from`..`to` of `tx`. */
  check(seq: number, state: State, tx: Transaction, commands: TurnCommand[], from: number, to: number): void {
    this.divergences.compare(seq, tx, this.events(seq, state, tx, commands), from, to);
  }
}
