import type { Resources } from '../resources.ts';
import { bucketDemand } from './bucketDemand.ts';
import type { BucketDemand, GpuPart } from './bucketDemand.ts';
import { recordInfeasible } from './failureMemo.ts';
import type { MemoMode } from './failureMemo.ts';
import type { GangShape, RoleShape } from './gangShape.ts';
import type { HostClass } from './hostClass.ts';
import { NO_DEVICES } from './hostIndex.ts';
import type { HostIndex } from './hostIndex.ts';
import { mostMembers } from './hostTrees.ts';
import { pickGpus } from './pickGpus.ts';
import { HostIterator } from './hostIterator.ts';
import type { Plan } from './planIterator.ts';
import { planIterator } from './planIterator.ts';
import { Statement } from './statement.ts';
import { domainShare, gangTotals, hostShare, topologyGroups } from './topologyDomains.ts';
import type { TopologyDomain, TopologyGroups } from './topologyDomains.ts';

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
 * `classes` are the host classes that pass the job's select. A placement topology (DESIGN.md §13)
 * is kept here, so every caller (a session, a reservation's plan, the empty-cluster check) keeps it.
 * `memo` says how its searches use the session's memo of failures (`MemoMode`).
 */
export function allocateGang(
  index: HostIndex,
  jobId: string,
  shape: GangShape,
  classes: readonly HostClass[],
  counters: AllocatorCounters = allocatorCounters(),
  avoid: Avoid | null = null,
  memo: MemoMode = 'on',
): Statement | null {
  const topology = shape.placement.topology;
  // a job without topology takes exactly the path it took before topology existed
  if (topology !== undefined) {
    return topology.mode === 'required'
      ? allocateRequired(index, jobId, shape, topologyGroups(index, classes, topology.key).domains, counters, avoid, memo)
      : allocatePreferred(index, jobId, shape, classes, topologyGroups(index, classes, topology.key), counters, avoid, memo);
  }
  const stmt = new Statement(index, jobId);
  if (placeGang(index, stmt, shape, classes, counters, avoid, memo, null, null)) return stmt;
  // never hold a partial gang: every debit of the attempt is given back
  stmt.discard();
  return null;
}

/**
 * Places every role of the gang on `classes` into `stmt` (false: it did not fit, with debits left
 * for the caller to discard). With `limit`, only a placement whose plan ranks strictly before it
 * counts (plan indices per role in placement order, compared in that order); `ranks`, when
 * given, receives the plan index each role took (0 under spread and same-node: one plan each).
 */
function placeGang(
  index: HostIndex,
  stmt: Statement,
  shape: GangShape,
  classes: readonly HostClass[],
  counters: AllocatorCounters,
  avoid: Avoid | null,
  memo: MemoMode,
  limit: readonly number[] | null,
  ranks: number[] | null,
  strict = true,
  firstPlan = 0,
): boolean {
  const policy = shape.placement.policy;
  if (policy !== 'pack' || shape.placement.ptile !== undefined) {
    // one plan per role: nothing ranks strictly before another placement
    if (limit !== null && strict) return false;
    if (ranks !== null) ranks.fill(0);
    if (policy === 'same-node') return placeSameNode(index, stmt, shape, classes, counters, avoid, memo);
    if (policy === 'spread') return placeSpread(index, stmt, shape, classes, counters, avoid, memo);
    return shape.roles.every((role) => placePackedRole(index, stmt, shape, role, classes, counters, avoid, memo, Number.POSITIVE_INFINITY) >= 0);
  }
  // lexicographic bound: while every role so far took the limit's plan, the next may take no later one
  let tight = limit !== null;
  const last = shape.roles.length - 1;
  for (let i = 0; i <= last; i++) {
    // the last role must rank strictly before the limit's plan if every role before it tied
    const max = tight ? limit![i]! - (i === last && strict ? 1 : 0) : Number.POSITIVE_INFINITY;
    const plan = placePackedRole(index, stmt, shape, shape.roles[i]!, classes, counters, avoid, memo, max, i === 0 ? firstPlan : 0);
    if (plan < 0) return false;
    if (ranks !== null) ranks[i] = plan;
    if (tight && plan < limit![i]!) tight = false;
  }
  // equal to the limit is not before it unless `strict` is off: the earlier domain keeps a tie
  return !tight || !strict;
}

/**
 * `required` topology (DESIGN.md §13): the gang within one domain. The one whose placement's plans
 * rank first wins (each role's plan index, compared in placement order), ties to the earlier domain
 * (by label value). A domain whose summed free capacity cannot hold the gang is not tried. Under
 * `pack`, the most members one host of a domain could take (its classes' tree maxima) bounds the
 * first role's plan from below: domains are tried by that bound, then in their order; a domain
 * whose bound ranks after the best placement so far is not tried, and plans below the bound are
 * skipped. After a first fit only a better placement is looked for (or an equal one of an earlier
 * domain), and a fit at every role's first plan ends the search (no bound of a later domain is
 * read: a domain of bound 0 is tried as soon as it is found). Domains are disjoint, so the best
 * placement so far stays held while others are tried, and is given back exactly when a better one
 * is found.
 */
function allocateRequired(index: HostIndex, jobId: string, shape: GangShape, domains: readonly TopologyDomain[], counters: AllocatorCounters, avoid: Avoid | null, memo: MemoMode): Statement | null {
  return bestDomain(index, jobId, shape, domains, counters, avoid, memo)?.stmt ?? null;
}

interface DomainFit {
  stmt: Statement;
  ranks: number[];
  /** The domain's place in domain order (ties go to the earlier). */
  at: number;
}

/** A domain that could hold the gang: its place in domain order and the least plan its first role could take there. */
interface DomainCandidate {
  domain: TopologyDomain;
  at: number;
  firstPlan: number;
}

function bestDomain(index: HostIndex, jobId: string, shape: GangShape, domains: readonly TopologyDomain[], counters: AllocatorCounters, avoid: Avoid | null, memo: MemoMode): DomainFit | null {
  if (domains.length === 0) return null;
  const sums = index.classFree();
  const need = gangTotals(shape);
  const packed = shape.placement.policy === 'pack' && shape.placement.ptile === undefined;
  const search: DomainSearch = { index, jobId, shape, counters, avoid, memo, best: null };
  // candidates are tried by bound, then in domain order: one of bound 0 is tried as soon as it is
  // found (no bound found after it can come before it), so a gang that fits a domain early at every
  // role's first plan reads no bound of the domains after it; the rest wait for every bound
  const later: DomainCandidate[] = [];
  for (let at = 0; at < domains.length; at++) {
    const domain = domains[at]!;
    if (domainShare(sums, domain.classes, need) < 1) continue;
    const firstPlan = firstPlanBound(index, shape, domain.classes, memo);
    if (firstPlan < 0 || !laterRolesMayFit(index, shape, domain.classes, memo)) continue;
    const candidate = { domain, at, firstPlan: packed ? firstPlan : 0 };
    if (candidate.firstPlan > 0) later.push(candidate);
    else if (!tryDomain(search, candidate)) return search.best;
  }
  // stable: equal bounds stay in domain order
  later.sort((a, b) => a.firstPlan - b.firstPlan);
  for (const candidate of later) if (!tryDomain(search, candidate)) break;
  return search.best;
}

/** One `bestDomain` search: the gang, and the best placement found so far (held). */
interface DomainSearch {
  index: HostIndex;
  jobId: string;
  shape: GangShape;
  counters: AllocatorCounters;
  avoid: Avoid | null;
  memo: MemoMode;
  best: DomainFit | null;
}

// Tries the gang in one candidate domain (candidates come by bound, then domain order), keeping the
// placement if it ranks before the best so far; false when no later candidate can do better.
function tryDomain(search: DomainSearch, { domain, at, firstPlan }: DomainCandidate): boolean {
  const { index, shape, best } = search;
  if (best !== null) {
    const first = best.ranks[0]!;
    // none from here on ranks before the best (a later tie loses)
    if (firstPlan > first || (shape.roles.length === 1 && firstPlan === first && at > best.at)) return false;
  }
  const stmt = new Statement(index, search.jobId);
  const ranks = new Array<number>(shape.roles.length).fill(0);
  // a domain earlier in domain order than the best so far also wins a tie
  const strict = best === null || at > best.at;
  if (!placeGang(index, stmt, shape, domain.classes, search.counters, search.avoid, search.memo, best?.ranks ?? null, ranks, strict, firstPlan)) {
    stmt.discard();
    return true;
  }
  best?.stmt.discard();
  search.best = { stmt, ranks, at };
  // nothing ranks before every role's first plan, and every domain of bound 0 before it was tried
  return !ranks.every((r) => r === 0);
}

/**
 * The least plan index the gang's first role could take on these classes under `pack` without
 * ptile (plan h - 1 puts up to ⌈count / h⌉ members on one host, and no host takes more members
 * than `mostMembers` allows), or -1 when no host there takes one member of it.
 */
function firstPlanBound(index: HostIndex, shape: GangShape, classes: readonly HostClass[], memo: MemoMode): number {
  const role = shape.roles[0]!;
  const locality = shape.placement.gpuLocality && role.resources.gpus > 0;
  let most = 0;
  for (const c of classes) {
    most = Math.max(most, mostMembers(c, role.resources, locality, memo, most));
    if (most >= role.count) return 0;
  }
  return most <= 0 ? -1 : Math.ceil(role.count / most) - 1;
}

/** How many times `preferred` grows its set of domains by one before it takes every candidate host. */
const PREFERRED_GROWTH = 2;

/**
 * `preferred` topology (DESIGN.md §13): the fewest domains, hosts without the label each a domain
 * of their own. One domain first: the best of the labelled domains as under `required`, or one
 * host without the label when that ranks strictly before it (all the gang on one host: every
 * role's first plan). Failing that, domains (and unlabelled hosts) by the share of the gang their
 * free capacity could hold, most first (ties: labelled domains in their order, then hosts by
 * rank): the fewest of them that could hold it all, then one more at a time, up to
 * PREFERRED_GROWTH times, then every candidate host, so a preferred topology never keeps out a
 * gang that fits without it.
 */
function allocatePreferred(
  index: HostIndex,
  jobId: string,
  shape: GangShape,
  classes: readonly HostClass[],
  groups: TopologyGroups,
  counters: AllocatorCounters,
  avoid: Avoid | null,
  memo: MemoMode,
): Statement | null {
  const everywhere = (): Statement | null => {
    const stmt = new Statement(index, jobId);
    if (placeGang(index, stmt, shape, classes, counters, avoid, memo, null, null)) return stmt;
    stmt.discard();
    return null;
  };
  if (groups.domains.length === 0) return everywhere();
  const best = bestDomain(index, jobId, shape, groups.domains, counters, avoid, memo);
  if (best !== null && best.ranks.every((r) => r === 0)) return best.stmt;
  if (groups.unlabelled.length > 0 && oneHostPossible(shape)) {
    const stmt = new Statement(index, jobId);
    if (placeSameNode(index, stmt, shape, groups.unlabelled, counters, avoid, memo)) {
      best?.stmt.discard();
      return stmt;
    }
    stmt.discard();
  }
  if (best !== null) return best.stmt;
  return severalDomains(index, jobId, shape, groups, counters, avoid, memo) ?? everywhere();
}

// All the gang on one host is a placement its plans allow: pack (each role's first plan, roles
// sharing the host), ptile when every role fits one bucket, spread for one member, same-node.
function oneHostPossible(shape: GangShape): boolean {
  const p = shape.placement;
  if (p.policy === 'spread') return shape.size === 1;
  if (p.policy === 'pack' && p.ptile !== undefined) return shape.roles.every((r) => r.count <= p.ptile!);
  return true;
}

/** A candidate domain of `preferred` beyond the first: a labelled domain, or one host without the label. */
interface Candidate {
  share: number;
  domain: TopologyDomain | null;
  host: number;
  order: number;
}

// The fewest domains whose free capacity could hold the gang, grown one at a time (see
// allocatePreferred); null when none of those sets takes it (or no set could).
function severalDomains(index: HostIndex, jobId: string, shape: GangShape, groups: TopologyGroups, counters: AllocatorCounters, avoid: Avoid | null, memo: MemoMode): Statement | null {
  const sums = index.classFree();
  const need = gangTotals(shape);
  const candidates: Candidate[] = groups.domains.map((domain, order) => ({ share: domainShare(sums, domain.classes, need), domain, host: -1, order }));
  for (const c of groups.unlabelled) for (const h of c.hosts) candidates.push({ share: hostShare(index, h, need), domain: null, host: h, order: groups.domains.length + h });
  candidates.sort((a, b) => b.share - a.share || a.order - b.order);
  let total = 0;
  let fewest = -1;
  for (let k = 0; k < candidates.length; k++) {
    total += candidates[k]!.share;
    if (total >= 1) {
      fewest = k + 1;
      break;
    }
  }
  // one domain was tried already; all of them is the caller's last resort
  if (fewest < 0) return null;
  const unlabelled = new Set(groups.unlabelled.map((c) => c.index));
  for (let k = Math.max(2, fewest); k < Math.min(candidates.length, fewest + PREFERRED_GROWTH + 1); k++) {
    const chosen = candidates.slice(0, k);
    const hosts = new Set<number>();
    const set = new Set<HostClass>();
    for (const c of chosen) {
      if (c.domain !== null) for (const cls of c.domain.classes) set.add(cls);
      else {
        hosts.add(c.host);
        set.add(index.classes[index.cls[c.host]!]!);
      }
    }
    const chosenClasses = [...set].sort((a, b) => a.index - b.index);
    // hosts without the label that were not chosen are passed over; a search that passes hosts
    // over says nothing about the cluster, so it feeds no memo of failures
    const unchosen = (h: number): boolean => unlabelled.has(index.cls[h]!) && !hosts.has(h);
    const skip: Avoid | null = hosts.size === 0 ? avoid : (h, d) => unchosen(h) || (avoid !== null && avoid(h, d));
    const stmt = new Statement(index, jobId);
    if (placeGang(index, stmt, shape, chosenClasses, counters, skip, hosts.size > 0 && memo === 'on' ? 'read' : memo, null, null)) return stmt;
    stmt.discard();
  }
  return null;
}

function bucketResources(role: RoleShape, n: number): Resources {
  const r = role.resources;
  return { cpu: r.cpu * n, memoryMb: r.memoryMb * n, slots: n, gpus: r.gpus * n };
}


// A search that found nothing on the clean cluster (nothing held, nothing skipped, no pin) proves
// that no host of the classes it searched takes this demand for the rest of the session (those
// it left out already say so by their tree roots or the memo).
function searchFailed(stmt: Statement, search: HostIterator, demand: BucketDemand, skipped: number, memo: MemoMode): void {
  if (stmt.mark() > 0 || skipped > 0 || stmt.pinned) return;
  for (const c of search.searched) recordInfeasible(c, demand, memo);
}

/**
 * One role under `pack`: its plans in order, a fresh host search per bucket excluding hosts this
 * plan already claimed (hosts other roles of the gang claimed stay candidates). A plan that
 * fails midway reverses its own debits before the next plan. Returns the index of the plan that
 * fit (plans after `maxPlan` are not tried), or -1.
 */
function placePackedRole(index: HostIndex, stmt: Statement, shape: GangShape, role: RoleShape, classes: readonly HostClass[], counters: AllocatorCounters, avoid: Avoid | null, memo: MemoMode, maxPlan: number, firstPlan = 0): number {
  const locality = shape.placement.gpuLocality;
  // GPUs the roles placed after this one may add on a host; under locality they share its domain
  const later = shape.roles.slice(shape.roles.indexOf(role) + 1);
  const laterGpus = later.reduce((n, r) => n + r.count * r.resources.gpus, 0);
  // plans before `from` put more members on one host than any host here could take now: their
  // first (largest) bucket's search would fail before any debit, so they are not built at all
  // (on one-slot hosts every plan but the last)
  const from = balancedFrom(index, role, classes, locality, shape.placement.ptile === undefined, firstPlan, memo);
  if (from < 0) return -1;
  counters.plansSkipped += from;
  // the plans' debits and reversals set the trees once before each fresh search and at the end:
  // a search continued past this plan's own debits only passes over hosts it claimed, whose
  // paths' older values still bound every other host below them
  const own = index.deferTrees();
  try {
    return packedPlans(index, stmt, shape, role, classes, counters, avoid, memo, maxPlan, from, laterGpus, own);
  } finally {
    if (own) index.flushTrees();
  }
}

// placePackedRole's plans from `from` on, with its debits' trees deferred (`deferred`: by it, so
// set before each fresh search)
function packedPlans(index: HostIndex, stmt: Statement, shape: GangShape, role: RoleShape, classes: readonly HostClass[], counters: AllocatorCounters, avoid: Avoid | null, memo: MemoMode, maxPlan: number, from: number, laterGpus: number, deferred: boolean): number {
  const locality = shape.placement.gpuLocality;
  // exact[b] = how many hosts can take a bucket of b members, learnt from failed searches
  const exact = new Map<number, number>();
  let rank = from - 1;
  for (const plan of planIterator(role.count, shape.placement, from)) {
    // plans after `maxPlan` would rank after a placement already found (topology domains)
    if (++rank > maxPlan) break;
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
    // what a bucket of the size searched for asks, and the resources its debits take (one object
    // for all of them: events' values are never mutated)
    let demand: BucketDemand | null = null;
    let resources: Resources | null = null;
    for (let j = 0; j < plan.length; j++) {
      const n = plan[j]!;
      // a bucket the size of the previous one continues its iterator: the only hosts that changed
      // since are claimed by this plan (skipped), so it yields what a fresh iterator would
      if (search === null || demand === null || resources === null || plan[j - 1] !== n) {
        const bucket = bucketDemand(role, n, locality);
        demand = bucket;
        resources = bucketResources(role, n);
        counters.hostSearches++;
        if (deferred) {
          index.flushTrees();
          index.deferTrees();
        }
        search = new HostIterator(index, bucket, classes, memo, (x) => claimed.has(x) || (avoid !== null && avoid(x, bucket)), (x) => stmt.pinOf(x));
      }
      const h = search.nextHost();
      if (h < 0) {
        searchFailed(stmt, search, demand, claimed.size, memo);
        failedAt = j;
        break;
      }
      const gpus = demand.gpus === 0 ? NO_DEVICES : pickGpus(index, h, demand.parts, demand.locality, stmt.pinOf(h), laterGpus)![0]!;
      stmt.debit(h, role.name, index.memberList(member, n), resources, gpus, role.resources.gpus, locality);
      claimed.add(h);
      member += n;
    }
    if (failedAt < 0) return rank;
    // buckets are largest first, so each claimed host could also take the failed bucket and no
    // other host could: exactly `failedAt` hosts take a bucket of this size (from the role's start)
    exact.set(plan[failedAt]!, failedAt);
    stmt.reverseTo(mark);
  }
  return -1;
}

/**
 * The first balanced plan of a packed role worth trying: at least `firstPlan`, and no plan whose
 * largest bucket ⌈count / h⌉ is more members than any host of the classes could take now
 * (`mostMembers`, a bound a host search never beats), nor any plan at all (-1) when the
 * classes' summed free capacity (`HostClass.room`) cannot hold the role's members. With `ptile` (one plan): `firstPlan`.
 */
function balancedFrom(index: HostIndex, role: RoleShape, classes: readonly HostClass[], locality: boolean, balanced: boolean, firstPlan: number, memo: MemoMode): number {
  if (!balanced || !index.prune) return firstPlan;
  const r = role.resources;
  const gpuLocal = locality && r.gpus > 0;
  let most = 0;
  let cpu = 0;
  let mem = 0;
  let slots = 0;
  let gpus = 0;
  for (const c of classes) {
    most = Math.max(most, mostMembers(c, r, gpuLocal, memo, most));
    cpu += c.room[0]!;
    mem += c.room[1]!;
    slots += c.room[2]!;
    gpus += c.room[3]!;
  }
  const n = role.count;
  if (most <= 0 || cpu < r.cpu * n || mem < r.memoryMb * n || slots < n || gpus < r.gpus * n) return -1;
  return Math.max(firstPlan, Math.ceil(n / Math.min(most, n)) - 1);
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
function placeSpread(index: HostIndex, stmt: Statement, shape: GangShape, classes: readonly HostClass[], counters: AllocatorCounters, avoid: Avoid | null, memo: MemoMode): boolean {
  const locality = shape.placement.gpuLocality;
  const claimed = new Set<number>();
  counters.plansTried++;
  for (const role of shape.roles) {
    const demand = bucketDemand(role, 1, locality);
    // one iterator per role: after each claim the only changed host is claimed (skipped), so
    // continuing yields exactly what a fresh iterator per member would
    counters.hostSearches++;
    const search = new HostIterator(index, demand, classes, memo, (x) => claimed.has(x) || (avoid !== null && avoid(x, demand)));
    for (let i = 0; i < role.count; i++) {
      const h = search.nextHost();
      if (h < 0) {
        searchFailed(stmt, search, demand, claimed.size, memo);
        return false;
      }
      const gpus = pickGpus(index, h, demand.parts, demand.locality, -1)![0]!;
      stmt.debit(h, role.name, index.memberList(role.firstMember + i, 1), bucketResources(role, 1), gpus, role.resources.gpus, locality);
      claimed.add(h);
    }
  }
  return true;
}

/** `same-node`: every member of every role on one host (with gpuLocality, all GPUs in one domain). */
function placeSameNode(index: HostIndex, stmt: Statement, shape: GangShape, classes: readonly HostClass[], counters: AllocatorCounters, avoid: Avoid | null, memo: MemoMode): boolean {
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
  const search = new HostIterator(index, demand, classes, memo, avoid === null ? undefined : (x) => avoid(x, demand));
  const h = search.nextHost();
  if (h < 0) {
    searchFailed(stmt, search, demand, 0, memo);
    return false;
  }
  const picked = gpus > 0 ? pickGpus(index, h, parts, demand.locality, -1)! : null;
  shape.roles.forEach((role, i) => {
    stmt.debit(h, role.name, index.memberList(role.firstMember, role.count), bucketResources(role, role.count), picked?.[i] ?? [], role.resources.gpus, locality);
  });
  return true;
}

// Whether, for every role after the first (`firstPlanBound` checks that one), some host of the
// classes may take one member now: a necessary condition for a placement there, far cheaper than
// trying one.
function laterRolesMayFit(index: HostIndex, shape: GangShape, classes: readonly HostClass[], memo: MemoMode): boolean {
  const locality = shape.placement.gpuLocality;
  for (let i = 1; i < shape.roles.length; i++) {
    const r = shape.roles[i]!.resources;
    if (!classes.some((c) => mostMembers(c, r, locality && r.gpus > 0, memo) >= 1)) return false;
  }
  return true;
}
