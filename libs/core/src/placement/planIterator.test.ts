import { describe, expect, test } from 'vitest';
import { balancedPlan, planIterator, ptilePlan } from './planIterator.ts';
import { provablyInfeasible } from './allocateGang.ts';

const pack = { policy: 'pack' as const, gpuLocality: false };

describe('planIterator', () => {
  test('pack: host counts ascending, one balanced partition each, largest buckets first', () => {
    expect([...planIterator(7, pack)]).toEqual([
      [7], [4, 3], [3, 2, 2], [2, 2, 2, 1], [2, 2, 1, 1, 1], [2, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1],
    ]);
    expect(balancedPlan(7, 3)).toEqual([3, 2, 2]);
  });

  test('plans are generated lazily, one per call, and exhaustion is stable', () => {
    const it = planIterator(1000, pack);
    expect(it.next().value).toEqual([1000]);
    expect(it.next().value).toEqual([500, 500]);
    const small = planIterator(2, pack);
    expect([small.next().value, small.next().value]).toEqual([[2], [1, 1]]);
    expect(small.next()).toEqual({ done: true, value: undefined });
    expect(small.next()).toEqual({ done: true, value: undefined });
  });

  test('ptile: buckets of N, the last one takes the remainder (one plan)', () => {
    expect([...planIterator(10, { ...pack, ptile: 4 })]).toEqual([[4, 4, 2]]);
    expect([...planIterator(3, { ...pack, ptile: 4 })]).toEqual([[3]]);
    expect(ptilePlan(8, 4)).toEqual([4, 4]);
  });

  test('spread: one member per host; same-node: one bucket', () => {
    expect([...planIterator(3, { policy: 'spread', gpuLocality: false })]).toEqual([[1, 1, 1]]);
    expect([...planIterator(3, { policy: 'same-node', gpuLocality: true })]).toEqual([[3]]);
    expect([...planIterator(0, pack)]).toEqual([]);
  });

  test('a plan is skipped only when learnt host counts prove it cannot be satisfied', () => {
    // exactly one host takes 3 members
    const exact = new Map([[3, 1]]);
    expect(provablyInfeasible([4, 3], exact)).toBe(true);
    expect(provablyInfeasible([3, 2, 2], exact)).toBe(false);
    expect(provablyInfeasible([3, 3], exact)).toBe(true);
    expect(provablyInfeasible([2, 2, 2, 1], new Map([[2, 2]]))).toBe(true);
    expect(provablyInfeasible([7], new Map())).toBe(false);
  });
});
