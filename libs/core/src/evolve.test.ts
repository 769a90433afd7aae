import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.ts';
import { evolve, fold } from './evolve.ts';
import { STATE_SCHEMA, initialState } from './state.ts';
import { stateHash } from './stateHash.ts';
import { arbitraryEvent, arbitraryEvents } from './testing/arbitraryEvents.ts';

describe('evolve and fold', () => {
  it('never throw on a generated stream of well-formed events', () => {
    fc.assert(
      fc.property(arbitraryEvents(), (events) => {
        let state = initialState();
        for (const event of events) state = evolve(state, event);
        expect(state.schema).toBe(STATE_SCHEMA);
      }),
      { numRuns: 300 },
    );
  });

  it('fold is a pure function: the same events give the same canonical state, batch or one by one', () => {
    fc.assert(
      fc.property(arbitraryEvents(), (events) => {
        const once = fold(initialState(), events);
        const again = fold(initialState(), events);
        let stepwise = initialState();
        for (const event of events) stepwise = evolve(stepwise, event);
        expect(canonicalJson(again)).toBe(canonicalJson(once));
        expect(stateHash(stepwise)).toBe(stateHash(once));
      }),
      { numRuns: 200 },
    );
  });

  it('folding the same 10,000 generated events twice gives byte-identical canonical state', () => {
    const events = fc.sample(arbitraryEvent, { numRuns: 10_000, seed: 42 });
    expect(events).toHaveLength(10_000);
    const a = canonicalJson(fold(initialState(), events));
    const b = canonicalJson(fold(initialState(), events));
    expect(b).toBe(a);
  });

  it('does not mutate the state it was given', () => {
    fc.assert(
      fc.property(arbitraryEvents(50), arbitraryEvents(50), (first, second) => {
        const base = fold(initialState(), first);
        const before = canonicalJson(base);
        fold(base, second);
        expect(canonicalJson(base)).toBe(before);
      }),
      { numRuns: 100 },
    );
  });
});
