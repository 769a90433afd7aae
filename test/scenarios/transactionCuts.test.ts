import { describe, expect, test } from 'vitest';
import { MAX_TRANSACTION_BYTES, TurnContext, foldTransactions, initialState, stateHash, subjects, turn } from '@muster/core';
import type { Input } from '@muster/core';
import { job } from '@muster/core/testing';

// The turn cuts ingests into transactions (issue 33): a large batch of inputs becomes several
// ingest transactions, each under the wire's limit, each input's events in one of them, numbered
// one after another, and the state after them is their fold.

describe('a turn cuts a large batch of inputs into ingest transactions', () => {
  test('3,000 submissions: several transactions, each under its limit, no input split, the state their fold', () => {
    const inputs: Input[] = Array.from({ length: 3000 }, (_, i) => ({ seq: i + 1, subject: subjects.submit, data: JSON.stringify(job(`job-${i}`, { tasks: 4 })) }));
    const state = initialState();
    const result = turn(new TurnContext(), state, null, [{ inputs }], { term: 1, leader: 'l', at: 1000 });
    const txs = result.transactions;
    expect(txs.length).toBeGreaterThan(1);
    expect(txs.map((t) => t.seq)).toEqual(txs.map((_, i) => state.seq + i + 1));
    const seen = new Map<number, number>();
    for (const [k, t] of txs.entries()) {
      expect(t.tx.kind).toBe('ingest');
      expect(JSON.stringify(t.tx.events).length).toBeLessThanOrEqual(400_000);
      expect(t.payload.length).toBeLessThan(MAX_TRANSACTION_BYTES);
      for (const e of t.tx.events) {
        const inputSeq = (e as { inputSeq?: number }).inputSeq;
        if (inputSeq === undefined) continue;
        // an input's events all land in the transaction its first landed in
        expect(seen.get(inputSeq) ?? k).toBe(k);
        seen.set(inputSeq, k);
      }
    }
    expect(seen.size).toBe(3000);
    expect(stateHash(foldTransactions(state, txs))).toBe(stateHash(result.state));
    // unencoded (what the auditor compares): the same events at the same sequences, cut the same way
    const eventsOf = (ts: readonly { seq: number; tx: { events: unknown[] } }[]) => ts.map((t) => [t.seq, t.tx.events]);
    expect(eventsOf(turn(new TurnContext(), state, null, [{ inputs }], { term: 1, leader: 'l', at: 1000 }, { encode: false }).transactions)).toEqual(eventsOf(txs));
    // and so for a session (every job pended: no host)
    const stamp = { term: 1, leader: 'l', at: 2000 };
    const session = turn(new TurnContext(), result.state, result.lastHash, [{ session: true }], stamp).transactions;
    expect(session.length).toBeGreaterThan(0);
    expect(eventsOf(turn(new TurnContext(), result.state, result.lastHash, [{ session: true }], stamp, { encode: false }).transactions)).toEqual(eventsOf(session));
  });
});
