import { fold, foldTransactions } from '@muster/core';
import type { State, Transaction } from '@muster/core';
import type { IngestGroup } from './ingestGroups.ts';
import { openedState } from './openedState.ts';
import { foldsAs } from './rederiver.ts';
import type { Rederiver } from './rederiver.ts';

/**
 * Folds ingest transaction `seq` onto `state` and returns the state after it, its inputs
 * re-derived by the turn on the state before them: all in one turn when every input is at hand
 * (whose state is the one after `seq` when it wrote the log's events as one transaction),
 * else each one on the state the log's events of its predecessors left, as the leader did it (an
 * input that is not at hand is folded, not re-derived).
 */
export function checkIngest(seq: number, tx: Transaction, groups: readonly IngestGroup[], state: State, rederiver: Rederiver, timings: { ingestMs: number }): State {
  const started = performance.now();
  if (groups.every((g) => g.input !== null)) {
    const derived = rederiver.rederive(seq, state, tx, [{ inputs: groups.map((g) => g.input!) }]);
    timings.ingestMs += performance.now() - started;
    const same = rederiver.divergences.compare(seq, tx, derived?.parts.flat() ?? null, 0, tx.events.length);
    // the turn folded the events it wrote: when they are the log's, as one transaction, its state is the log's
    return same && derived !== null && foldsAs(derived, seq) ? derived.state : foldTransactions(state, [{ seq, tx }]);
  }
  let after = openedState(state, seq, tx);
  for (const { from, to, input } of groups) {
    if (input !== null) rederiver.check(seq, after, tx, [{ inputs: [input] }], from, to);
    after = fold(after, tx.events.slice(from, to));
  }
  timings.ingestMs += performance.now() - started;
  return after;
}
