import { describe, expect, it } from 'vitest';
import { foldTransactions, initialState, transactionHash } from '@muster/core';
import type { LoggedTransaction, SchedulerEvent } from '@muster/core';
import { Ledger } from '@muster/scheduler';
import { copyLog, golden } from '../audit/histories.ts';

// A replica checks every Checkpoint it folds, whether it names the state just before it or the
// state a checkpoint mark (an empty checkpoint transaction) kept turns earlier.
const marked = golden('marked-checkpoints');
const read = (log: readonly LoggedTransaction[]) => log.map((l) => ({ ...l, hash: transactionHash(l.tx) }));
const checkpointOf = (l: LoggedTransaction) => l.tx.events.find((e): e is Extract<SchedulerEvent, { type: 'Checkpoint' }> => e.type === 'Checkpoint');
// the first Checkpoint appended later than right after its mark
const lagged = marked.log.findIndex((l) => {
  const c = checkpointOf(l);
  return c !== undefined && c.seq < l.seq - 1;
});

describe('Ledger.fold and checkpoint marks', () => {
  it('finds every Checkpoint of the recorded log right, in one batch or one transaction at a time', () => {
    expect(lagged).toBeGreaterThan(0);
    expect(new Ledger().fold(read(marked.log))).toEqual([]);
    const ledger = new Ledger();
    for (const tx of read(marked.log)) expect(ledger.fold([tx])).toEqual([]);
    expect(ledger.state.seq).toBe(marked.expected.lastSeq);
  });

  it('reports a Checkpoint whose marked state hashes otherwise, in any batching', () => {
    const log = copyLog(marked.log);
    checkpointOf(log[lagged]!)!.stateHash = '0'.repeat(64);
    const mismatch = { seq: checkpointOf(log[lagged]!)!.seq, expected: '0'.repeat(64) };
    // the lie is folded into the state (lastCheckpoint), so later checkpoints disagree too
    expect(new Ledger().fold(read(log))[0]).toMatchObject(mismatch);
    const ledger = new Ledger();
    const found = read(log).flatMap((tx) => ledger.fold([tx]));
    expect(found[0]).toMatchObject(mismatch);
  });

  it('does not compare a Checkpoint of a state marked before the one it started from (a snapshot in between)', () => {
    const log = copyLog(marked.log);
    checkpointOf(log[lagged]!)!.stateHash = '0'.repeat(64);
    const start = lagged - 1; // after the mark, before its Checkpoint
    const state = foldTransactions(initialState(), log.slice(0, start));
    const ledger = new Ledger(state, transactionHash(log[start - 1]!.tx));
    const found = ledger.fold(read(log.slice(start)));
    expect(found.map((m) => m.seq)).not.toContain(checkpointOf(log[lagged]!)!.seq);
  });
});
