import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalCache, canonicalBytes, canonicalHash, canonicalJson } from './canonical.ts';
import { fold } from './evolve.ts';
import { initialState } from './state.ts';
import { arbitraryEvents } from './testing/arbitraryEvents.ts';

// The first, plain writer of docs/canonical-json.md: JSON.stringify for every scalar and key,
// keys sorted. The fast writer must give the same bytes for every JSON value.
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
    return value === undefined ? 'null' : (JSON.stringify(value) as string);
  }
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${reference(record[key])}`);
  return `{${members.join(',')}}`;
}

const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '\u0001', '\ud800', '\udc00', '\u2028', '9', '10') }));
const scalar = fc.oneof(text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constantFrom(-0, 1e21, 0.1 + 0.2, Infinity, NaN));
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('array'), tie('record')),
  array: fc.array(tie('value'), { maxLength: 6 }),
  record: fc.dictionary(fc.oneof(text, fc.integer({ min: 0, max: 20 }).map(String)), tie('value'), { maxKeys: 6 }),
})).value;

describe('canonicalJson', () => {
  it('writes exactly what the reference writer writes, for any JSON value', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts keys that come in a different order and skips undefined first members', () => {
    expect(canonicalJson({ z: 1, a: undefined, b: { d: [undefined], c: 'x"y' } })).toBe('{"b":{"c":"x\\"y","d":[null]},"z":1}');
    expect(canonicalJson({ '\ud800x': 1, a: '\udfff' })).toBe('{"a":"\\udfff","\\ud800x":1}');
  });
});

describe('canonicalBytes with a CanonicalCache', () => {
  it('writes the same bytes as without, over a run of folded states that share leaves', () => {
    fc.assert(
      fc.property(arbitraryEvents(120), fc.integer({ min: 1, max: 30 }), (events, step) => {
        const cache = new CanonicalCache();
        let state = initialState();
        for (let i = 0; i < events.length; i += step) {
          state = fold(state, events.slice(i, i + step));
          expect(canonicalHash(state, cache)).toBe(canonicalHash(state));
          expect(DECODE(canonicalBytes(state, cache))).toBe(canonicalJson(state));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('ignores leaves that are not frozen (a state parsed from JSON)', () => {
    const cache = new CanonicalCache();
    const state = fold(initialState(), fc.sample(arbitraryEvents(200), { numRuns: 1, seed: 5 })[0]!);
    const parsed = JSON.parse(canonicalJson(state)) as typeof state;
    expect(canonicalHash(parsed, cache)).toBe(canonicalHash(state));
    expect(canonicalHash(state, cache)).toBe(canonicalHash(state));
  });
});

const DECODE = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
