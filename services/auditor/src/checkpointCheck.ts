import { checkpointedState, isCheckpointMark } from '@muster/core';
import type { Checkpoint, State, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import { shortHash } from './shortHash.ts';
import type { StateHasher } from './stateHasher.ts';

/** A Checkpoint the later range of a parallel audit leaves to the range before it: it names neither the state before it nor a mark of the range (a mark before the split, or none). */
export interface DeferredCheckpoint {
  /** The checkpoint transaction, the Checkpoint, and the transaction it follows. */
  seq: number;
  event: Checkpoint;
  after: number;
}

/** Checks each Checkpoint's hash against the replayed state it names: the state before it, or the one after the last checkpoint mark. */
export class CheckpointCheck {
  // the state after the last checkpoint mark, kept until a Checkpoint names it
  private marked: State | null = null;
  /** Checkpoints of a later range naming no state it holds (see `DeferredCheckpoint`). */
  readonly deferred: DeferredCheckpoint[] = [];

  /** `laterRange`: this check is a later range's, which starts after the log's beginning. */
  constructor(
    private readonly findings: AuditFindings,
    private readonly hasher: StateHasher,
    private readonly laterRange = false,
  ) {}

  /** Checks checkpoint transaction `seq` against `state`, the state before it (folding it, then `noteMark`, is the caller's). */
  check(seq: number, tx: Transaction, state: State): void {
    for (const event of tx.events) {
      if (event.type !== 'Checkpoint') {
        this.findings.fail(seq, 'structure', `checkpoint transaction ${seq} holds a ${event.type}`);
        continue;
      }
      const named = checkpointedState(event, state, this.marked);
      // with no mark of its own, a later range cannot tell what the mark before its start says
      if (named === null && this.marked === null && this.laterRange) this.deferred.push({ seq, event, after: state.seq });
      else this.checkOne(seq, event, named, state.seq);
    }
  }

  /** Checks the Checkpoints the later range deferred, against the mark this check holds (which no mark in that range replaced before them). */
  checkDeferred(deferred: readonly DeferredCheckpoint[]): void {
    for (const d of deferred) this.checkOne(d.seq, d.event, d.event.seq === this.marked?.seq ? this.marked : null, d.after);
  }

  /** After folding `tx` into `state`: when it is a checkpoint mark (an empty checkpoint transaction), keeps the state it marks for the Checkpoint that will name it. */
  noteMark(tx: Transaction, state: State): void {
    if (isCheckpointMark(tx)) this.marked = state;
  }

  private checkOne(seq: number, event: Checkpoint, named: State | null, after: number): void {
    const { counts } = this.findings;
    counts.checkpointsChecked++;
    if (named === null) {
      counts.checkpointsFailed++;
      const mark = this.marked === null ? 'no checkpoint mark is open' : `the open checkpoint mark is at ${this.marked.seq}`;
      this.findings.fail(seq, 'checkpoint', `the Checkpoint in transaction ${seq} is for the state after ${event.seq}, but it follows transaction ${after} and ${mark}`);
      return;
    }
    const hash = this.hasher.hash(named);
    if (hash !== event.stateHash) {
      counts.checkpointsFailed++;
      this.findings.fail(seq, 'checkpoint', `the Checkpoint in transaction ${seq} says the state after ${event.seq} hashes to ${shortHash(event.stateHash)}; replay gives ${shortHash(hash)}`);
    }
  }
}
