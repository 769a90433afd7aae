import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { JobRequest } from '../contract/types.ts';
import { largestFit, surplusMembers } from './elasticGangs.ts';
import type { JobState } from '../state.ts';

const request = (roles: { count: number; minCount?: number; gpus?: number }[]): JobRequest => ({
  roles: roles.map((r, i) => ({ name: `r${i}`, count: r.count, ...(r.minCount === undefined ? {} : { minCount: r.minCount }), resources: { cpu: 1000, memoryMb: 1024, gpus: r.gpus ?? 0, gpuMemoryMb: 0 } })),
  placement: { policy: 'pack', gpuLocality: false },
  select: '',
});

describe('largestFit', () => {
  test('under a fit that holds up to a threshold per role, finds each role\'s largest count, asking only about counts above the minimum', () => {
    fc.assert(fc.property(fc.array(fc.record({ min: fc.integer({ min: 1, max: 20 }), extra: fc.nat(40), cut: fc.nat(70) }), { minLength: 1, maxLength: 3 }), (roles) => {
      const req = request(roles.map((r) => ({ count: r.min + r.extra, minCount: r.min })));
      const lower = roles.map((r) => r.min);
      const upper = roles.map((r) => r.min + r.extra);
      let asked = 0;
      const fits = (c: readonly number[]): boolean => {
        asked++;
        c.forEach((n, i) => expect(n).toBeGreaterThanOrEqual(lower[i]!));
        return c.every((n, i) => n <= Math.max(lower[i]!, roles[i]!.cut));
      };
      const found = largestFit(req, lower, upper, fits);
      expect(found).toEqual(roles.map((r, i) => Math.min(upper[i]!, Math.max(lower[i]!, r.cut))));
      // a role that cannot grow costs two questions; one that can, a halving's worth
      expect(asked).toBeLessThanOrEqual(roles.reduce((n, r) => n + 2 + Math.ceil(Math.log2(r.extra + 1)), 0));
    }), { numRuns: 300 });
  });

  test('grows the heaviest role first: with room for only one role, the GPU role takes it', () => {
    const req = request([{ count: 8, minCount: 1 }, { count: 8, minCount: 1, gpus: 1 }]);
    // room for 7 more members in all
    const found = largestFit(req, [1, 1], [8, 8], (c) => c[0]! + c[1]! <= 9);
    expect(found).toEqual([1, 8]);
  });
});

describe('surplusMembers', () => {
  test('the members above each role\'s minimum, newest (highest) first, the last role first', () => {
    const req = request([{ count: 4, minCount: 1 }, { count: 4, minCount: 2 }]);
    const bound = (n: number) => ({ node: 'h', role: n < 4 ? 'r0' : 'r1', gpuIds: [], done: false, ok: false, released: false });
    const job = { spec: req, members: [0, 1, 2, null, 4, 5, 6, null].map((m) => (m === null ? null : bound(m))) } as unknown as JobState;
    expect(surplusMembers(job, req)).toEqual([6, 2, 1]);
  });
});
