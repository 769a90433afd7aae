import type { JobRequest } from '../contract/types.ts';
import type { AbortCategory, AbortReason } from '../events.ts';
import { isElastic, requestFingerprint, requestOf } from '../jobRequests.ts';
import { allocateGang } from '../placement/allocateGang.ts';
import type { Avoid } from '../placement/allocateGang.ts';
import { fitsEmptyCluster } from '../placement/fitsEmptyCluster.ts';
import type { GangShape } from '../placement/gangShape.ts';
import type { HostClass } from '../placement/hostClass.ts';
import type { Statement } from '../placement/statement.ts';
import type { JobState } from '../state.ts';
import { commit, rendezvousOf } from './commitEvents.ts';
import { enlarge } from './elasticGrowth.ts';
import { fail } from './failedAttempt.ts';
import type { Miss } from './failedAttempt.ts';
import { portReason, quotaReason, reasonFor } from './missReasons.ts';
import { plannedRuntime } from './runtimeLimits.ts';
import { report } from './sessionScope.ts';
import type { AttemptScope } from './sessionScope.ts';
import { preempt, preemptionKey } from './sessionPreemption.ts';
import { gangRequest } from './queueLedger.ts';
import { classesFor, variantsOf } from './sessionVariants.ts';
import type { Placed, Variant } from './sessionVariants.ts';

/** How many hosts of member 0 without a free rendezvous port an attempt passes over before it fails (DESIGN.md §15). */
const PORT_RETRIES = 3;

const NO_HOSTS: ReadonlySet<number> = new Set();

/**
 * One attempt of a pending job: its variants in order, without stopping anyone (the first that
 * fits commits, DESIGN.md §13); then, with queues defined, a preemption over the variants in
 * order; else it fails (pended, and reserved when short of resources).
 */
export function attempt(scope: AttemptScope, job: JobState): void {
  scope.stats.attempted++;
  if (unchangedMiss(scope, job)) return;
  const variants = variantsOf(scope, job);
  const leaf = scope.ledger?.leafOf(job.spec) ?? '';
  // the variants in order, without stopping anyone: the first that fits commits (DESIGN.md §13)
  const misses: Miss[] = [];
  for (const variant of variants) {
    const miss = tryVariant(scope, job, variant, leaf);
    if (miss === null) return;
    misses.push(miss);
  }
  // then a blocked job that may preempt does so, over the variants in order, rather than wait or
  // reserve (DESIGN.md §11, §12): above a queue's max only stopping gangs of its own queues can
  // make room; short of resources, a reclaim or a lower priority may
  if (scope.ledger !== null) {
    for (const [i, variant] of variants.entries()) {
      const category = misses[i]!.category;
      if ((category === 'quota' || category === 'insufficient-resources') && preempt(scope, job, variant, leaf)) return;
    }
  }
  fail(scope, job, variants, misses);
}

/**
 * Issue 32 (a session's cost follows what changed): an attempt known to write nothing and to change
 * nothing later jobs see, done without building its variant. That is a job of one plain request
 * (no alternatives, not elastic), holding no reservation, whose request an identical one already
 * failed this session with the category the job's recorded pend reason has (`servedUnchanged`):
 * the attempt would be served from the session's cache, pend writing nothing, reserve nothing (not
 * short of resources, no reservation left to give, or behind the reserved job the cache names) and
 * clear nothing; with queues defined, it would also pass admission and preempt no one
 * (`preemptsNoOne`). Off with the indices.
 */
function unchangedMiss(scope: AttemptScope, job: JobState): boolean {
  if (!doesNothing(scope, job)) return false;
  scope.stats.cacheHits++;
  if (scope.options.onAttempt !== undefined) report(scope, job.spec.id, scope.index.memo.gangShape(requestOf(job.spec, 0)!).size, 'cached', false);
  return true;
}

/** Whether an attempt of `job` now would be one `unchangedMiss` ends: served from the cache, writing and changing nothing. */
export function doesNothing(scope: AttemptScope, job: JobState): boolean {
  const recorded = job.pendReason?.category;
  if (recorded === undefined || job.reservation !== undefined || job.spec.alternatives !== undefined || scope.options.indices === false) return false;
  const fingerprint = requestFingerprint(job, 0);
  const cacheKey = cacheKeyOf(job, fingerprint);
  if (!servedUnchanged(scope, cacheKey, recorded)) return false;
  // without alternatives, the spec is its one request
  const request = job.spec;
  return !isElastic(request) && (scope.ledger === null || preemptsNoOne(scope, job, request, fingerprint, scope.unsatisfiable.get(cacheKey)!.category));
}

/**
 * With queues defined, whether an attempt of a plain request served from the cache with `category`
 * would end there: its queues admit it (over a `max` it would be refused for quota and preempt),
 * and a request short of resources finds this session's search for victims already failed for
 * its fingerprint, leaf and priority (only a preemption, which empties the cache, would end that).
 */
function preemptsNoOne(scope: AttemptScope, job: JobState, request: JobRequest, fingerprint: string, category: AbortCategory): boolean {
  const ledger = scope.ledger!;
  const leaf = ledger.leafOf(job.spec);
  if (ledger.quotaIssue(leaf, gangRequest(request)) !== null) return false;
  return category !== 'insufficient-resources' || scope.noVictims.has(preemptionKey(fingerprint, leaf, job.spec.priority));
}

/**
 * Whether a job recorded as pending with `recorded`, whose one plain request has the cache key
 * `cacheKey`, would be pended from the session's cache as it is now with nothing to write or
 * reserve: an identical request failed this session with that category (or short of resources,
 * for a job held back by a reservation while reservations stand: `pend` writes nothing then
 * either), and the job would get no reservation (not short of resources, none left to give, or
 * behind the reserved job the entry names).
 */
export function servedUnchanged(scope: AttemptScope, cacheKey: string, recorded: AbortCategory): boolean {
  const hit = scope.unsatisfiable.get(cacheKey);
  if (hit === undefined) return false;
  const planner = scope.planner;
  if (hit.category !== recorded && !(recorded === 'reserved' && hit.category === 'insufficient-resources' && planner !== null)) return false;
  // (with a planner, no room left or the entry's job reserved means a reservation stands: `othersReserved`)
  return !(hit.category === 'insufficient-resources' && planner !== null && planner.room > 0 && !planner.reserves(hit.jobId));
}

/** Tries one request of a job: null when it committed, otherwise how it missed (nothing of it is left held). */
function tryVariant(scope: AttemptScope, job: JobState, variant: Variant, leaf: string): Miss | null {
  const stats = scope.stats;
  const id = job.spec.id;
  const { shape } = variant;
  const ledger = scope.ledger;
  if (ledger !== null) {
    const quota = ledger.quotaIssue(leaf, variant.demand!);
    // above a queue's max (never cached: it depends on the queue, not on the request)
    if (quota !== null) return { category: 'quota', cached: false, classes: null, reason: () => quotaReason(quota) };
  }
  const cacheKey = cacheKeyOf(job, variant.fingerprint);
  const hit = scope.unsatisfiable.get(cacheKey);
  if (hit !== undefined) {
    // an identical request already exhausted every plan this session: no allocator for it
    const reason: AbortReason = {
      category: hit.category,
      message: `an identical request (job ${hit.jobId}, same user, queue and project) found ${hit.category} earlier in this session`,
      hosts: {},
      cached: true,
    };
    return { category: hit.category, cached: true, cachedBy: hit.jobId, classes: null, reason: () => reason };
  }
  const planner = scope.planner;
  const runtime = planner === null ? 0 : plannedRuntime(job, scope.base.policy!);
  const end = scope.at + runtime;
  const held = scope.heldBack.get(cacheKey);
  if (held !== undefined && end >= held.end) return { category: 'reserved', cached: true, classes: null, reason: () => held.reason };
  const classes = classesFor(scope, variant);
  if (classes.length > 0) stats.allocatorRuns++;
  // backfill: placed now only where it delays no reservation made earlier in this session. The
  // placement as it would be without reservations stands when it delays none; otherwise the
  // search runs again passing over the hosts where it would. (A job that does not fit at all
  // does not fit with less either: one search decides it.)
  const { stmt, delaying } = classes.length > 0 ? placeNow(scope, id, shape, classes, end) : { stmt: null, delaying: null };
  if (stmt === null && delaying !== null) {
    // it fits, but only by delaying a reservation: it waits (cached for identical requests that run as long or longer)
    const delayed = planner!.delayed(end, delaying)!;
    const reason: AbortReason = {
      category: 'reserved',
      message: `would delay job ${delayed.jobId}, reserved to start at ${delayed.startAt} on ${delayed.hosts.join(', ')}; it fits now only until then (expected to run ${runtime === Number.POSITIVE_INFINITY ? 'until closed' : `${runtime} ms`})`,
      hosts: {},
      by: delayed.jobId,
    };
    if (held === undefined || end < held.end) scope.heldBack.set(cacheKey, { end, reason: { ...reason, message: `an identical request (job ${id}, same user, queue and project, expected to run no longer) ${reason.message}`, cached: true } });
    return { category: 'reserved', cached: false, classes, reason: () => reason };
  }
  if (stmt !== null) {
    const excluded = new Set<number>();
    const enlarged = (s: Statement): Placed => (isElastic(variant.request) ? enlarge(scope, job, variant, s, leaf, (part) => placeNow(scope, id, part, classes, end, excluded).stmt) : { stmt: s, shape, demand: variant.demand });
    let placed = enlarged(stmt);
    let meet = rendezvousOf(scope, placed.stmt);
    let exhausted: string | null = null;
    while (meet !== undefined && 'exhausted' in meet) {
      // member 0's host has no rendezvous port left (DESIGN.md §15): the gang is placed again
      // without that host, a few times at most, before the attempt fails for want of a port
      placed.stmt.discard();
      exhausted ??= meet.exhausted;
      excluded.add(scope.index.hostOf.get(meet.exhausted)!);
      const again = excluded.size > PORT_RETRIES ? null : placeNow(scope, id, shape, classes, end, excluded).stmt;
      if (again === null) {
        const node = exhausted;
        return { category: 'insufficient-resources', cached: false, classes, reason: () => portReason(node) };
      }
      placed = enlarged(again);
      meet = rendezvousOf(scope, placed.stmt);
    }
    planner?.committed(id, placed.stmt.held, end);
    commit(scope, job, variant, placed, [], meet?.rendezvous);
    report(scope, id, placed.shape.size, 'committed', true);
    return null;
  }
  const category: AbortCategory = classes.length === 0
    ? 'no-matching-hosts'
    : fitsEmpty(scope, variant, classes) ? 'insufficient-resources' : 'placement-unsatisfiable';
  // a preemption that makes room clears this cache, so the entry never outlives what it says
  scope.unsatisfiable.set(cacheKey, { category, jobId: id });
  return { category, cached: false, classes, reason: () => reasonFor(scope, variant, shape, classes, category) };
}

/**
 * Places a gang now, delaying no reservation made earlier in this session: the placement as it
 * would be without reservations when it delays none, else the search again passing over the
 * hosts where it would (`delaying`: the hosts of the first placement, when only that one fitted).
 */
function placeNow(scope: AttemptScope, id: string, shape: GangShape, classes: readonly HostClass[], end: number, excluded: ReadonlySet<number> = NO_HOSTS): { stmt: Statement | null; delaying: number[] | null } {
  const { planner, index, stats } = scope;
  // hosts passed over (member 0's hosts without a rendezvous port): such a search says nothing
  // about the cluster, so it feeds no memo of failures
  const exclude: Avoid | undefined = excluded.size === 0 ? undefined : (h) => excluded.has(h);
  let stmt = exclude === undefined ? allocateGang(index, id, shape, classes, stats) : allocateGang(index, id, shape, classes, stats, exclude, 'read');
  if (stmt === null || planner === null || !planner.violates(end, stmt.held)) return { stmt, delaying: null };
  const hosts = stmt.held.map((d) => d.host);
  stmt.discard();
  // a search that passes hosts over says nothing about the cluster: it feeds no memo of failures
  const reserved = planner.avoid(end);
  stmt = allocateGang(index, id, shape, classes, stats, exclude === undefined || reserved === null ? reserved ?? exclude : (h, demand) => excluded.has(h) || reserved(h, demand), 'read');
  // roles sharing a host could still add up past an allowance together
  if (stmt !== null && planner.violates(end, stmt.held)) {
    stmt.discard();
    stmt = null;
  }
  return stmt === null ? { stmt: null, delaying: hosts } : { stmt, delaying: null };
}

/** Whether a variant fits the cluster with every host empty (read once per fingerprint in a session). */
function fitsEmpty(scope: AttemptScope, variant: Variant, classes: readonly HostClass[]): boolean {
  let fits = scope.emptyFits.get(variant.fingerprint);
  if (fits === undefined) {
    fits = fitsEmptyCluster(scope.index, variant.shape, classes);
    scope.emptyFits.set(variant.fingerprint, fits);
  }
  return fits;
}

/**
 * The session-local cache's key: a request's fingerprint and the job's identity, like
 * `unsatisfiableKey` (which keys the state's copy), in a cheaper unambiguous form (NUL never
 * occurs in an id or a name).
 */
export function cacheKeyOf(job: Pick<JobState, 'spec'>, fingerprint: string): string {
  const { user, queue, project } = job.spec.identity;
  return `${fingerprint}\u0000${user}\u0000${queue}\u0000${project}`;
}
