import { checkpointedState, isCheckpointMark } from '@muster/core';
import type { State, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import { shortHash } from './shortHash.ts';
import type { StateHasher } from './stateHasher.ts';

/** Checks each Checkpoint's hash against the replayed state it names: the state before it, or the one after the last checkpoint mark. */
export class CheckpointCheck {
  // the state after the last checkpoint mark, kept until a Checkpoint names it
  private marked: State | null = null;

  constructor(
    private readonly findings: AuditFindings,
    private readonly hasher: StateHasher,
  ) {}

  /** Checks checkpoint transaction `seq` against `state`, the state before it (folding it, then `noteMark`, is the caller's). */
  check(seq: number, tx: Transaction, state: State): void {
    const { counts } = this.findings;
    for (const event of tx.events) {
      if (event.type !== 'Checkpoint') {
        this.findings.fail(seq, 'structure', `checkpoint transaction ${seq} holds a ${event.type}`);
        continue;
      }
      counts.checkpointsChecked++;
      const named = checkpointedState(event, state, this.marked);
      if (named === null) {
        counts.checkpointsFailed++;
        const mark = this.marked === null ? 'no checkpoint mark is open' : `the open checkpoint mark is at ${this.marked.seq}`;
        this.findings.fail(seq, 'checkpoint', `the Checkpoint in transaction ${seq} is for the state after ${event.seq}, but it follows transaction ${state.seq} and ${mark}`);
        continue;
      }
      const hash = this.hasher.hash(named);
      if (hash !== event.stateHash) {
        counts.checkpointsFailed++;
        this.findings.fail(seq, 'checkpoint', `the Checkpoint in transaction ${seq} says the state after ${event.seq} hashes to ${shortHash(event.stateHash)}; replay gives ${shortHash(hash)}`);
      }
    }
  }

  /** After folding `tx` into `state`: when it is a checkpoint mark (an empty checkpoint transaction), keeps the state it marks for the Checkpoint that will name it. */
  noteMark(tx: Transaction, state: State): void {
    if (isCheckpointMark(tx)) this.marked = state;
  }
}
