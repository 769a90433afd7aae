import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteScratch } from './byteWriter.ts';
import { CanonicalCache, canonicalBytes, canonicalChunks, canonicalHash, canonicalJson } from './canonical.ts';
import { makeTransaction } from './chain.ts';
import { transactionHash } from './envelope.ts';
import { fold, foldTransactions } from './evolve.ts';
import { initialState } from './state.ts';
import { stateHash } from './stateHash.ts';
import { arbitraryEvents } from './testing/arbitraryEvents.ts';

// The worked example of docs/canonical-json.md: if one of these values changes, every state hash
// and transaction hash in every existing log changes with it, and the page is wrong.
describe('state hash and transaction hash (docs/canonical-json.md)', () => {
  const tx1 = makeTransaction(null, { kind: 'ingest', term: 1, leader: 's1', at: 1764400000000, session: 0 }, [
    { type: 'NodeRegistered', v: 1, inputSeq: 1, node: { id: 'n1', labels: { zone: 'a' }, capacity: { cpu: 8000, memoryMb: 65536 }, gpus: [] } },
  ]);

  it('serialises and hashes the example transaction and the state after it', () => {
    expect(canonicalJson(tx1)).toBe(
      '{"at":1764400000000,"events":[{"inputSeq":1,"node":{"capacity":{"cpu":8000,"memoryMb":65536},"gpus":[],"id":"n1","labels":{"zone":"a"}},"type":"NodeRegistered","v":1}],"kind":"ingest","leader":"s1","part":1,"parts":1,"prev":null,"session":0,"term":1,"v":1}',
    );
    expect(transactionHash(tx1)).toBe('c8f3cc4d4ec020f77c025aee9fd8c2efa4e2b5319da0265e62fd3a2099c5444d');
    const state = foldTransactions(initialState(), [{ seq: 1, tx: tx1 }]);
    expect(state.nodes[12]?.[0]?.[0]?.[0]?.spec.id).toBe('n1');
    expect(stateHash(state)).toBe('bd034d6f2436a1a6733cf4b1dcbb66c4066fb8562de7355695b227967d7e87c9');
    const tx2 = makeTransaction(transactionHash(tx1), { kind: 'checkpoint', term: 1, leader: 's1', at: 1764400000500, session: 0 }, [
      { type: 'Checkpoint', seq: 1, stateHash: stateHash(state) },
    ]);
    expect(transactionHash(tx2)).toBe('9202f39f825426eb782b470b6434c7bb0a12456352d2c85ce11b5296058e02cc');
  });

  it('writes the canonical forms the page lists', () => {
    expect(canonicalJson({ b: 1, a: [3, undefined, { z: null, y: undefined }], 'é': 'x', B: -0, n: 1e21, f: 0.1 + 0.2, inf: Infinity, '10': 't', '9': 'n' })).toBe(
      '{"10":"t","9":"n","B":0,"a":[3,null,{"z":null}],"b":1,"f":0.30000000000000004,"inf":null,"n":1e+21,"é":"x"}',
    );
    expect(canonicalJson({ '\u{1F600}': 1, '\uFF01': 2 })).toBe('{"\u{1F600}":1,"\uFF01":2}');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('a CanonicalCache kept across the states of a log', () => {
  it('leaves every hash as it was, whatever it cached from the states before', () => {
    fc.assert(
      fc.property(arbitraryEvents(150), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 4 }), (events, step, every) => {
        const cache = new CanonicalCache();
        let state = initialState();
        for (let i = 0, batch = 1; i < events.length; i += step, batch++) {
          state = fold(state, events.slice(i, i + step));
          if (batch % every === 0) expect(canonicalHash(state, cache)).toBe(stateHash(state));
        }
        expect(canonicalHash(state, cache)).toBe(stateHash(state));
      }),
      { numRuns: 150 },
    );
  });
});

describe('canonicalChunks', () => {
  it('gives, chunk by chunk, exactly the canonical bytes of a state, cached, not yet cached or with a scratch buffer that keeps nothing', () => {
    fc.assert(
      fc.property(arbitraryEvents(120), fc.integer({ min: 1, max: 4000 }), fc.constantFrom('cold', 'warm', 'scratch'), (events, chunkBytes, how) => {
        const state = fold(initialState(), events);
        const cache = new CanonicalCache();
        if (how === 'warm') canonicalHash(fold(initialState(), events.slice(0, events.length >> 1)), cache);
        const expected = canonicalBytes(state).slice();
        const parts: Uint8Array[] = [];
        for (const chunk of canonicalChunks(state, how === 'scratch' ? new ByteScratch() : cache, chunkBytes)) {
          // a chunk is valid until the next is asked for: another write in between must not touch it
          canonicalBytes({ unrelated: events.length });
          parts.push(chunk.slice());
        }
        expect(Buffer.concat(parts).equals(Buffer.from(expected))).toBe(true);
        expect(canonicalHash(state, cache)).toBe(stateHash(state));
      }),
      { numRuns: 120 },
    );
  });
});
