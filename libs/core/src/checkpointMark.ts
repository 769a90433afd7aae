// Checkpoint marks (docs/events.md): a leader marks the state with an empty `checkpoint`
// transaction, hashes it off its turn, and appends the Checkpoint naming the mark later. Replicas
// and the auditor read the log by the same two rules.
import type { Transaction } from './envelope.ts';
import type { Checkpoint } from './events.ts';
import type { State } from './state.ts';

/** Whether a transaction is a checkpoint mark: an empty `checkpoint` transaction, whose state a later Checkpoint names. */
export function isCheckpointMark(tx: Pick<Transaction, 'kind' | 'events'>): boolean {
  return tx.kind === 'checkpoint' && tx.events.length === 0;
}

/** The state a Checkpoint names: `current` (after the transaction before it) or `marked` (after the last mark); null when neither. */
export function checkpointedState(checkpoint: Checkpoint, current: State, marked: State | null): State | null {
  return checkpoint.seq === current.seq ? current : checkpoint.seq === marked?.seq ? marked : null;
}
