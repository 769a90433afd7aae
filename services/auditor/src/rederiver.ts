import { payloadHash } from '@muster/bus';
import { TurnContext, turn } from '@muster/core';
import type { SchedulerEvent, State, Transaction, TurnCommand } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import { DivergenceReport, transactionName } from './divergenceReport.ts';

/** What the core's turn writes for some commands: each transaction's log sequence and events, and the state after them. */
export interface Rederivation {
  seqs: number[];
  parts: SchedulerEvent[][];
  /** The state after the transactions: the fold of them onto the state the turn started from (turn.ts). */
  state: State;
}

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
   * What the core's turn writes on `state` for `commands`, stamped as `tx` was; null when the turn
   * threw. The core throws only on a state no log it wrote can lead to (a log written again over
   * another history folds to one: docs/drills.md, the 15-minute soak), so that is reported as a
   * divergence at `seq`, and the audit goes on.
   */
  rederive(seq: number, state: State, tx: Transaction, commands: TurnCommand[]): Rederivation | null {
    try {
      // only the events are compared: nothing is serialised or hashed
      const result = turn(this.context, state, tx.prev, commands, { term: tx.term, leader: tx.leader, at: tx.at }, { encode: false });
      return { seqs: result.transactions.map((t) => t.seq), parts: result.transactions.map((t) => t.tx.events), state: result.state };
    } catch (err) {
      this.divergences.whole(seq, tx, `${transactionName(tx)} at ${seq} cannot be re-derived: the core threw on the state before it (${(err as Error).message}), a state no log the core wrote leads to`);
      return null;
    }
  }

  /** The events the turn writes for `commands` on `state`, as one list (null when it threw). */
  events(seq: number, state: State, tx: Transaction, commands: TurnCommand[]): SchedulerEvent[] | null {
    return this.rederive(seq, state, tx, commands)?.parts.flat() ?? null;
  }

  /** Re-derives `commands` on `state` and compares the result with the log's events `from`..`to` of `tx`. */
  check(seq: number, state: State, tx: Transaction, commands: TurnCommand[], from: number, to: number): void {
    this.divergences.compare(seq, tx, this.events(seq, state, tx, commands), from, to);
  }
}

/**
 * Whether a re-derivation that gave the log's events wrote them as transaction `seq` alone,
 * stamped as `tx`: its state is then the fold of `tx` onto the state before it, and need not be
 * folded again.
 */
export function foldsAs(derived: Rederivation, seq: number): boolean {
  return derived.seqs.length === 1 && derived.seqs[0] === seq;
}
