import type { Resources } from '../resources.ts';
import type { GangShape, RoleShape } from './gangShape.ts';
import type { GpuPart } from './pickGpus.ts';
import { pickGpus } from './pickGpus.ts';
import type { BucketDemand, HostClass, HostIndex } from './hostIndex.ts';
import { HostIterator } from './hostIterator.ts';
import type { Plan } from './planIterator.ts';
import { planIterator } from './planIterator.ts';
import { Statement } from './statement.ts';

/** Counters of the allocator's work, for tests and the benchmark. */
export interface AllocatorCounters {
  plansTried: number;
  plansSkipped: number;
  hostSearches: number;
}

/** A fresh set of counters. */
export function allocatorCounters(): AllocatorCounters {
  return { plansTried: 0, plansSkipped: 0, hostSearches: 0 };
}

/** Hosts a search must pass over for a bucket (a backfill that would delay a reservation there), besides those the plan claimed. */
export type Avoid = (host: number, demand: BucketDemand) => boolean;

/**
 * Places a whole gang on the index, all or nothing: the statement of debits (and reversals of
 * failed plans) when every member has a host, or null with the index exactly as it was.
 * `classes` are the host classes that pass the job's select.
 */
export function allocateGang(
  index: HostIndex,
  jobId: string,
  shape: GangShape,
  classes: readonly HostClass[],
  counters: AllocatorCounters = allocatorCounters(),
  avoid: Avoid | null = null,
): Statement | null {
  const stmt = new Statement(index, jobId);
  const ok = shape.placement.policy === 'same-node'
    ? placeSameNode(index, stmt, shape, classes, counters, avoid)
    : shape.placement.policy === 'spread'
      ? placeSpread(index, stmt, shape, classes, counters, avoid)
      : shape.roles.every((role) => placePackedRole(index, stmt, shape, role, classes, counters, avoid));
  if (ok) return stmt;
  // never hold a partial gang: every debit of the attempt is given back
  stmt.discard();
  return null;
}

/** What `n` members of a role ask of one host, as one bucket. */
export function bucketDemand(role: RoleShape, n: number, locality: boolean): BucketDemand {
  const r = role.resources;
  const gpus = r.gpus * n;
  return {
    cpu: r.cpu * n,
    memoryMb: r.memoryMb * n,
    slots: n,
    gpus,
    parts: [{ count: gpus, gpuMemoryMb: gpus > 0 ? r.gpuMemoryMb : 0 }],
    locality: locality && gpus > 0,
  };
}

function bucketResources(role: RoleShape, n: number): Resources {
  const r = role.resources;
  return { cpu: r.cpu * n, memoryMb: r.memoryMb * n, slots: n, gpus: r.gpus * n };
}

function memberRange(first: number, n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = first + i;
  return out;
}

// A search that found nothing on the clean cluster (nothing held, nothing skipped, no pin) proves
// that no host of these classes takes this demand for the rest of the session.
function searchFailed(index: HostIndex, stmt: Statement, classes: readonly HostClass[], demand: BucketDemand, skipped: number): void {
  if (stmt.mark() > 0 || skipped > 0 || stmt.pinned) return;
  for (const c of classes) index.recordInfeasible(c, demand);
}

/**
 * One role under `pack`: its plans in order, a fresh host search per bucket excluding hosts this
 * plan already claimed (hosts other roles of the gang claimed stay candidates). A plan that
 * fails midway reverses its own debits before the next plan.
 */
function placePackedRole(index: HostIndex, stmt: Statement, shape: GangShape, role: RoleShape, classes: readonly HostClass[], counters: AllocatorCounters, avoid: Avoid | null): boolean {
  const locality = shape.placement.gpuLocality;
  // GPUs the roles placed after this one may add on a host; under locality they share its domain
  const later = shape.roles.slice(shape.roles.indexOf(role) + 1);
  const laterGpus = later.reduce((n, r) => n + r.count * r.resources.gpus, 0);
  // exact[b] = how many hosts can take a bucket of b members, learnt from failed searches
  const exact = new Map<number, number>();
  for (const plan of planIterator(role.count, shape.placement)) {
    if (provablyInfeasible(plan, exact)) {
      counters.plansSkipped++;
      continue;
    }
    counters.plansTried++;
    const mark = stmt.mark();
    const claimed = new Set<number>();
    let member = role.firstMember;
    let failedAt = -1;
    let search: HostIterator | null = null;
    for (let j = 0; j < plan.length; j++) {
      const n = plan[j]!;
      const demand = bucketDemand(role, n, locality);
      // a bucket the size of the previous one continues its iterator: the only hosts that changed
      // since are claimed by this plan (skipped), so it yields what a fresh iterator would
      if (search === null || plan[j - 1] !== n) {
        counters.hostSearches++;
        search = new HostIterator(index, demand, classes, (x) => claimed.has(x) || (avoid !== null && avoid(x, demand)), (x) => stmt.pinOf(x));
      }
      const h = search.nextHost();
      if (h < 0) {
        searchFailed(index, stmt, classes, demand, claimed.size);
        failedAt = j;
        break;
      }
      const gpus = pickGpus(index, h, demand.parts, demand.locality, stmt.pinOf(h), laterGpus)![0]!;
      stmt.debit(h, role.name, memberRange(member, n), bucketResources(role, n), gpus, role.resources.gpus, locality);
      claimed.add(h);
      member += n;
    }
    if (failedAt < 0) return true;
    // buckets are largest first, so each claimed host could also take the failed bucket and no
    // other host could: exactly `failedAt` hosts take a bucket of this size (from the role's start)
    exact.set(plan[failedAt]!, failedAt);
    stmt.reverseTo(mark);
  }
  return false;
}

/**
 * Whether learnt counts prove a plan cannot be satisfied: it needs `k` hosts that take `b` or more
 * members, and fewer than `k` hosts take some b' ≤ b. Such a plan is skipped without debits.
 */
export function provablyInfeasible(plan: Plan, exact: ReadonlyMap<number, number>): boolean {
  if (exact.size === 0) return false;
  for (let j = 0; j < plan.length; j++) {
    const b = plan[j]!;
    if (j + 1 < plan.length && plan[j + 1] === b) continue;
    // j + 1 buckets need at least b members each
    for (const [size, hosts] of exact) if (size <= b && hosts < j + 1) return true;
  }
  return false;
}

/** `spread`: every member of the gang (all roles, heaviest first) on a host of its own. */
function placeSpread(index: HostIndex, stmt: Statement, shape: GangShape, classes: readonly HostClass[], counters: AllocatorCounters, avoid: Avoid | null): boolean {
  const locality = shape.placement.gpuLocality;
  const claimed = new Set<number>();
  counters.plansTried++;
  for (const role of shape.roles) {
    const demand = bucketDemand(role, 1, locality);
    // one iterator per role: after each claim the only changed host is claimed (skipped), so
    // continuing yields exactly what a fresh iterator per member would
    counters.hostSearches++;
    const search = new HostIterator(index, demand, classes, (x) => claimed.has(x) || (avoid !== null && avoid(x, demand)));
    for (let i = 0; i < role.count; i++) {
      const h = search.nextHost();
      if (h < 0) {
        searchFailed(index, stmt, classes, demand, claimed.size);
        return false;
      }
      const gpus = pickGpus(index, h, demand.parts, demand.locality, -1)![0]!;
      stmt.debit(h, role.name, [role.firstMember + i], bucketResources(role, 1), gpus, role.resources.gpus, locality);
      claimed.add(h);
    }
  }
  return true;
}

/** `same-node`: every member of every role on one host (with gpuLocality, all GPUs in one domain). */
function placeSameNode(index: HostIndex, stmt: Statement, shape: GangShape, classes: readonly HostClass[], counters: AllocatorCounters, avoid: Avoid | null): boolean {
  const locality = shape.placement.gpuLocality;
  const parts: GpuPart[] = shape.roles.map((r) => ({ count: r.resources.gpus * r.count, gpuMemoryMb: r.resources.gpus > 0 ? r.resources.gpuMemoryMb : 0 }));
  const gpus = parts.reduce((n, p) => n + p.count, 0);
  const demand: BucketDemand = {
    cpu: shape.roles.reduce((n, r) => n + r.resources.cpu * r.count, 0),
    memoryMb: shape.roles.reduce((n, r) => n + r.resources.memoryMb * r.count, 0),
    slots: shape.size,
    gpus,
    parts: gpus > 0 ? parts : [{ count: 0, gpuMemoryMb: 0 }],
    locality: locality && gpus > 0,
  };
  counters.plansTried++;
  counters.hostSearches++;
  const h = new HostIterator(index, demand, classes, avoid === null ? undefined : (x) => avoid(x, demand)).nextHost();
  if (h < 0) {
    searchFailed(index, stmt, classes, demand, 0);
    return false;
  }
  const picked = gpus > 0 ? pickGpus(index, h, parts, demand.locality, -1)! : null;
  shape.roles.forEach((role, i) => {
    stmt.debit(h, role.name, memberRange(role.firstMember, role.count), bucketResources(role, role.count), picked?.[i] ?? [], role.resources.gpus, locality);
  });
  return true;
}
