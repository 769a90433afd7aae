import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SchedulerEvent } from '../events.ts';
import { initialState } from '../state.ts';
import { MAX_TRANSACTION_BYTES } from '../wire/limits.ts';
import { INGEST_LIMITS, SESSION_LIMITS, TransactionCutter } from './transactionCutter.ts';

/** A unit of `n` events of about `pad` bytes each (the cutter reads only their JSON). */
function unit(id: number, n: number, pad: number): SchedulerEvent[] {
  return Array.from({ length: n }, (_, k) => ({ type: 'LeaderElected', term: id * 1000 + k, leader: 'x'.repeat(pad) }) as SchedulerEvent);
}

describe('TransactionCutter', () => {
  it('keeps every unit whole, stays within the byte limit unless one unit alone is over it, closes at the event limit, and opens each transaction at the next sequence', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ n: fc.integer({ min: 1, max: 12 }), pad: fc.nat(400) }), { maxLength: 60 }),
        fc.integer({ min: 200, max: 5000 }),
        fc.integer({ min: 1, max: 30 }),
        (shapes, bytes, events) => {
          const state = { ...initialState(), seq: 7 };
          const cutter = new TransactionCutter({ bytes, events }, { at: 5, term: 3 });
          const units = shapes.map((s, i) => unit(i, s.n, s.pad));
          const landed = units.map((u) => {
            const seqBefore = state.seq;
            const tx = cutter.add(state, u);
            return { tx, opened: state.seq !== seqBefore };
          });
          const txs = cutter.transactions;
          // every unit landed whole in one transaction, in order, and the transactions hold exactly the units
          expect(txs.flat()).toEqual(units.flat());
          for (const { tx } of landed) expect(txs).toContain(tx);
          // each transaction opened once, at the next sequence, with its stamp
          expect(state.seq).toBe(7 + txs.length);
          expect(cutter.seqs).toEqual(txs.map((_, i) => 8 + i));
          if (txs.length > 0) expect([state.lastAt, state.term]).toEqual([5, 3]);
          expect(landed.filter((l) => l.opened)).toHaveLength(txs.length);
          for (const [i, tx] of txs.entries()) {
            const held = units.filter((_, k) => landed[k]!.tx === tx);
            const size = held.reduce((sum, u) => sum + JSON.stringify(u).length, 0);
            // over the byte limit only when one unit alone is
            if (held.length > 1) expect(size).toBeLessThanOrEqual(bytes);
            // a transaction before the last closed at the event limit or before a unit that would overflow it
            if (i < txs.length - 1) {
              const next = units[landed.findIndex((l) => l.tx === txs[i + 1])]!;
              expect(tx.length >= events || size + JSON.stringify(next).length > bytes).toBe(true);
            }
          }
        },
      ),
    );
  });

  it('derives both limits from the wire limit, at the values the log was written with', () => {
    expect(INGEST_LIMITS).toEqual({ bytes: 400_000, events: Infinity });
    expect(SESSION_LIMITS).toEqual({ bytes: 900_000, events: 1000 });
    expect(SESSION_LIMITS.bytes).toBeLessThan(MAX_TRANSACTION_BYTES);
  });
});
