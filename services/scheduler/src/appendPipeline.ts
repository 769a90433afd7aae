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
 * Fenced appends of the leader's turns, one at a time (DESIGN.md §3, contract v1.2): the tip moves
 * past a turn's transactions as soon as it is handed over, so the next turn is planned while they
 * are in flight, but its append goes out only once the one before it landed. Fenced by sequence
 * alone, an append sent while its predecessor was unanswered could land after a foreign write of as
 * many transactions; fenced also by the last msg id, it wedged a copy that caught up from a stream
 * snapshot (test/bus/lastMsgIdCatchup). Turns are adopted in log order; after a failure nothing
 * more is sent or adopted.
 */
export class AppendPipeline {
  private tipNow: Tip;
  // the last append handed over: it resolves, after those before it, once its turn is adopted (false: it or one before it failed)
  private last: Promise<boolean> = Promise.resolve(true);

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

  /** Resolves once every append handed over so far settled: true when all were adopted. */
  settled(): Promise<boolean> {
    return this.last;
  }

  /**
   * Moves the tip past a turn's transactions and appends them once every earlier append landed;
   * the promise resolves once the log took them (the ledger adopts the turn's state), or false once
   * this or an earlier one failed (then this one is never sent).
   */
  send(result: TurnResult): Promise<boolean> {
    const txs = result.transactions;
    this.tipNow = { state: result.state, lastHash: result.lastHash };
    const before = this.last;
    const done = (async () => {
      // a later append can only land right after this one: never in flight before it landed
      if (!(await before)) return false;
      const outcome = await appendTransactions(this.bus, txs, txs[0]!.seq - 1);
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
