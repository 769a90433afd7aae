import type { PlacementSpec } from '../contract/types.ts';

/** One plan for a role: bucket sizes, largest first; each bucket goes to one distinct host. */
export type Plan = readonly number[];

/**
 * The plans of one role of `count` members, most preferred first, generated lazily (DESIGN.md §5):
 * a pure function of the member count and the placement, never of the cluster.
 * - `pack` without `ptile`: host counts h = 1, 2, …, count; for each h one balanced partition
 *   (sizes differ by at most one), largest buckets first (7 over 3 hosts: 3, 2, 2).
 * - `pack` with `ptile = N`: one plan, buckets of N, the last one takes the remainder.
 * - `spread`: one plan, every member on its own host (buckets of 1).
 * - `same-node`: one plan, one bucket of every member.
 * Under `pack` without `ptile`, the plans before index `from` are left out (a caller that knows
 * they cannot fit starts later, without building them).
 */
export function* planIterator(count: number, placement: PlacementSpec, from = 0): Generator<Plan, void, undefined> {
  if (count <= 0) return;
  switch (placement.policy) {
    case 'same-node':
      yield [count];
      return;
    case 'spread':
      yield new Array<number>(count).fill(1);
      return;
    case 'pack':
      if (placement.ptile !== undefined) {
        yield ptilePlan(count, placement.ptile);
        return;
      }
      for (let hosts = from + 1; hosts <= count; hosts++) yield balancedPlan(count, hosts);
      return;
  }
}

/** `count` members over `hosts` buckets whose sizes differ by at most one, largest first. */
export function balancedPlan(count: number, hosts: number): Plan {
  const base = Math.floor(count / hosts);
  const larger = count % hosts;
  const plan = new Array<number>(hosts);
  for (let i = 0; i < hosts; i++) plan[i] = i < larger ? base + 1 : base;
  return plan;
}

/** Buckets of `ptile` members, the last one taking the remainder. */
export function ptilePlan(count: number, ptile: number): Plan {
  const plan: number[] = [];
  for (let left = count; left > 0; left -= ptile) plan.push(Math.min(ptile, left));
  return plan;
}
