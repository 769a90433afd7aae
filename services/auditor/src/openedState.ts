import { foldTransactions } from '@muster/core';
import type { State, Transaction } from '@muster/core';

/** The state with transaction `seq`'s envelope applied to `state` and none of its events yet. */
export function openedState(state: State, seq: number, tx: Transaction): State {
  return foldTransactions(state, [{ seq, tx: { ...tx, events: [] } }]);
}
