import { appendTransactions } from '@muster/bus';
import type { AppendResult, Bus } from '@muster/bus';
import type { State, TurnResult } from '@muster/core';
import type { Ledger } from './ledger.ts';

/** What the next turn plans on: the state and hash after the last transaction sent (acked or not). */
export interface Tip {
  state: State;
  lastHash: string | null;
}

/** What the pipeline tells its term: a turn's transactions landed (in log order), or an append failed. */
export interface AppendPipelineEvents {
  adopted(result: TurnResult): void;
  failed(result: AppendResult & { ok: false }, of: number): void;
}

/**
 * Fenced, pipelined appends of the leader's turns: a turn's transactions go out at once, fenced on
 * the sequence before them, and the tip moves past them, so the next turn is planned while they are
 * in flight. Turns are adopted strictly in log order; a failed fence fails everything after it
 * (each append expects the one before it), and nothing after a failure is adopted.
 */
export class AppendPipeline {
  private tipNow: Tip;
  // the last append sent: it resolves, after those before it, once its turn is adopted (false: it or one before it failed)
  private last: Promise<boolean> = Promise.resolve(true);
  // appends sent and not yet answered
  private inFlight = 0;
  // an append was answered with a failure (fenced, timed out): nothing is sent after it
  private broken = false;

  constructor(
    private readonly bus: Bus,
    private readonly ledger: Ledger,
    private readonly events: AppendPipelineEvents,
  ) {
    this.tipNow = { state: ledger.state, lastHash: ledger.lastHash };
  }

  /** The state and hash the next turn plans on. */
  get tip(): Tip {
    return this.tipNow;
  }

  /** Plans from the ledger again (after a catch-up, before the first turn of a term). */
  resetTip(): void {
    this.tipNow = { state: this.ledger.state, lastHash: this.ledger.lastHash };
  }

  /** Resolves once every append sent so far settled: true when all were adopted. */
  settled(): Promise<boolean> {
    return this.last;
  }

  /**
   * Sends a turn's transactions now and moves the tip past them; the promise resolves after every
   * earlier send, once the log took them (the ledger adopts the turn's state), or false once this
   * or an earlier one failed. After an append was answered with a failure nothing more is sent:
   * a turn planned on the tip of that append (while it was in flight) would be fenced by sequence
   * alone, and a foreign writer that appended as many transactions makes that sequence true.
   */
  send(result: TurnResult): Promise<boolean> {
    if (this.broken) return this.last.then(() => false);
    const txs = result.transactions;
    // pipelined on an append still in flight: fence on that append's last message too, or a
    // foreign writer that appended as many transactions would let this one land after its own
    const sent = appendTransactions(this.bus, txs, txs[0]!.seq - 1, { chained: this.inFlight > 0 });
    this.inFlight++;
    const answered = (ok: boolean): void => {
      this.inFlight--;
      if (!ok) this.broken = true;
    };
    sent.then((outcome) => answered(outcome.ok), () => answered(false));
    this.tipNow = { state: result.state, lastHash: result.lastHash };
    const before = this.last;
    const done = (async () => {
      const outcome = await sent;
      // a later append can only land if this one did: adopt in log order, or not at all
      if (!(await before)) return false;
      if (!outcome.ok) {
        this.events.failed(outcome, txs.length);
        return false;
      }
      // the fence held, so the log now holds exactly what the turn folded
      this.ledger.state = result.state;
      this.ledger.lastHash = result.lastHash;
      this.ledger.adopted(txs);
      this.events.adopted(result);
      return true;
    })();
    this.last = done;
    return done;
  }
}
