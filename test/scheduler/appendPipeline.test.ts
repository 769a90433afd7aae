// A leader's turn planned on the tip of an append that then failed must never land: its fence is
// the sequence after the failed append, and a foreign writer that appended as many transactions
// makes that sequence true. Found in a 200 gangs/s drill: s2's append of 925 was fenced by s3's
// election there, s2's next turn, planned during that append and sent after its answer, landed at
// 926 on top of s3's election, and every replica refused the broken chain.
// Real nats-server; the foreign writer is a second connection appending at the same sequence.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendTransactions, encodeTransaction, lastLogSequence, readLogMessage } from '@muster/bus';
import { foldTransactions, initialState, makeTransaction } from '@muster/core';
import type { State, TurnResult } from '@muster/core';
import { AppendPipeline } from '@muster/scheduler/testing';
import { Ledger } from '@muster/scheduler';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

/** A turn of one empty fact transaction by `leader` on `state` after `prev`. */
function factTurn(state: State, prev: string | null, leader: string, term: number): TurnResult {
  const tx = makeTransaction(prev, { kind: 'fact', term, leader, at: 1_000 + state.seq, session: state.session }, []);
  const encoded = encodeTransaction(tx);
  const logged = { seq: state.seq + 1, tx, payload: encoded.payload, hash: encoded.hash };
  return { transactions: [logged], state: foldTransactions(state, [logged]), lastHash: encoded.hash, session: null, marked: null };
}

describe('the append pipeline after a failed append', () => {
  let bus: TestBus;

  beforeAll(async () => {
    bus = await startTestBus();
  });

  afterAll(async () => {
    await bus?.stop();
  });

  it('sends nothing more: a turn planned on the failed append does not land after the foreign write', async () => {
    const ledger = new Ledger(initialState(), null);
    const failures: string[] = [];
    let adopted = 0;
    const pipeline = new AppendPipeline(bus.bus, ledger, { adopted: () => adopted++, failed: (r) => failures.push(r.code) });
    expect(await pipeline.send(factTurn(ledger.state, null, 's2', 22))).toBe(true);

    // s2 plans its next transaction at 2; before it is sent, s3 appends its own at 2
    const planned = factTurn(pipeline.tip.state, pipeline.tip.lastHash, 's2', 22);
    const other = await bus.client({ name: 's3' });
    const foreign = makeTransaction(ledger.lastHash, { kind: 'election', term: 23, leader: 's3', at: 1_100, session: 0 }, []);
    expect((await appendTransactions(other, [foreign], 1)).ok).toBe(true);
    const sent = pipeline.send(planned);
    // s2 plans the turn after it and hands it over while that append is in flight: fenced by
    // sequence alone (it expects 2, which the foreign write made true), it would land if it went
    // out before the append before it was answered
    const after = pipeline.send(factTurn(pipeline.tip.state, pipeline.tip.lastHash, 's2', 22));
    expect(await sent).toBe(false);
    expect(await after).toBe(false);
    expect(failures).toEqual(['conflict']);

    // its fence alone (last sequence 2) would have held: the log ends at the foreign write
    expect(await lastLogSequence(bus.bus)).toBe(2);
    expect((await readLogMessage(bus.bus, 2))?.tx.leader).toBe('s3');
    expect(adopted).toBe(1);
    expect(ledger.seq).toBe(1);
  });
});
