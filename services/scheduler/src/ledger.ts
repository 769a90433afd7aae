import { nativeStateHash } from '@muster/bus';
import type { ReadTransaction } from '@muster/bus';
import { CanonicalCache, checkpointedState, foldTransactions, initialState, isCheckpointMark } from '@muster/core';
import type { LoggedTransaction, State } from '@muster/core';
import { StampClock } from './stampClock.ts';

/** A checkpoint in the log whose hash differs from the state this replica folded. */
export interface CheckpointMismatch {
  seq: number;
  expected: string;
  actual: string;
}

/**
 * The log as this replica has folded it: the state after `state.seq` and the hash of that
 * transaction (the `prev` the next one must carry). Leader and standby share one ledger.
 */
export class Ledger {
  state: State;
  lastHash: string | null;
  /** Serialised leaves of this replica's states, so each checkpoint, snapshot or status hash writes only what changed. */
  readonly hashCache = new CanonicalCache();
  /** The log's time as this replica watched it pass: what a leader's stamps are held to. */
  readonly stampClock: StampClock;
  /**
   * The log sequence of the newest snapshot this replica knows of (0: none): the one it rebuilt
   * from, or one it saved or found stored while it led. The next is saved `snapshotEvery`
   * transactions after it, whichever term saved it.
   */
  snapshotSeq = 0;
  /** Events adopted since the last snapshot this replica saved or rebuilt from (the next is saved `snapshotEveryEvents` after). */
  eventsSinceSnapshot = 0;
  /** The state after the last checkpoint mark (an empty `checkpoint` transaction), until a Checkpoint names it. */
  private marked: State | null = null;
  /** Called with every batch this replica adopts (folded as a standby, or appended as leader) and the state after it. */
  onAdopted: ((txs: readonly LoggedTransaction[], state: State) => void) | null = null;

  constructor(state: State = initialState(), lastHash: string | null = null, stampClock: StampClock = new StampClock()) {
    this.state = state;
    this.lastHash = lastHash;
    this.stampClock = stampClock;
  }

  /** Log sequence of the last folded transaction. */
  get seq(): number {
    return this.state.seq;
  }

  /**
   * Folds transactions read from the log, in one `produce` between checkpoints, checking each
   * Checkpoint against the state it names: the one before it, or the marked one. Returns the
   * mismatches (a replica that finds one must not lead). A Checkpoint of a state this replica
   * never held (marked before the snapshot it started from) is not compared.
   */
  fold(txs: readonly ReadTransaction[]): CheckpointMismatch[] {
    const mismatches: CheckpointMismatch[] = [];
    let state = this.state;
    let start = 0;
    // checkpoints hash the state after the transaction they name, so fold up to there first
    for (let i = 0; i < txs.length; i++) {
      const { tx } = txs[i]!;
      if (isCheckpointMark(tx)) {
        state = foldRange(state, txs.slice(start, i + 1));
        start = i + 1;
        this.marked = state;
        continue;
      }
      const checkpoint = tx.events.find((e) => e.type === 'Checkpoint');
      if (checkpoint === undefined || checkpoint.type !== 'Checkpoint') continue;
      state = foldRange(state, txs.slice(start, i));
      start = i;
      const named = checkpointedState(checkpoint, state, this.marked);
      if (named === this.marked) this.marked = null;
      if (named !== null) {
        const actual = nativeStateHash(named, this.hashCache);
        if (actual !== checkpoint.stateHash) mismatches.push({ seq: checkpoint.seq, expected: checkpoint.stateHash, actual });
      }
    }
    this.state = foldRange(state, txs.slice(start));
    this.stampClock.observe(this.state.lastAt);
    const last = txs[txs.length - 1];
    if (last !== undefined) this.lastHash = last.hash;
    this.adopted(txs);
    return mismatches;
  }

  /** Tells `onAdopted` that `txs` are now part of the folded state (the leader's pipeline calls it after an append lands). */
  adopted(txs: readonly LoggedTransaction[]): void {
    for (const { tx } of txs) this.eventsSinceSnapshot += tx.events.length;
    if (txs.length > 0) this.onAdopted?.(txs, this.state);
  }
}

function foldRange(state: State, txs: readonly LoggedTransaction[]): State {
  return txs.length === 0 ? state : foldTransactions(state, txs);
}
