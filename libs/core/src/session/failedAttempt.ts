import type { AbortCategory, AbortReason, GangAborted, GangReserved, ReservationCleared } from '../events.ts';
import { reservationCleared } from '../lifecycle.ts';
import type { GangShape } from '../placement/gangShape.ts';
import type { HostClass } from '../placement/hostClass.ts';
import type { JobState } from '../state.ts';
import type { PlannedReservation } from './reservationPlanner.ts';
import { plannedRuntime } from './runtimeLimits.ts';
import { emit, report } from './sessionScope.ts';
import type { AttemptScope } from './sessionScope.ts';
import { classesFor } from './sessionVariants.ts';
import type { Variant } from './sessionVariants.ts';

/** How a variant missed: its category, whether from the cache, its hosts (when tried) and its reason. */
export interface Miss {
  category: AbortCategory;
  cached: boolean;
  /** Served from the cache: the job whose failure this session the entry holds. */
  cachedBy?: string;
  classes: HostClass[] | null;
  reason: () => AbortReason;
}

/**
 * A failed attempt: its category is the closest variant's (DESIGN.md §13; the only one's for a
 * job without alternatives), served from the cache only when every variant was; a job short of
 * resources is reserved at the earliest start over its variants short of resources.
 */
export function fail(scope: AttemptScope, job: JobState, variants: readonly Variant[], misses: readonly Miss[]): void {
  const stats = scope.stats;
  let closest = 0;
  for (let i = 1; i < misses.length; i++) if (closeness(misses[i]!.category) > closeness(misses[closest]!.category)) closest = i;
  const miss = misses[closest]!;
  const cached = misses.every((m) => m.cached);
  for (const m of misses) {
    if (m.cached) stats.cacheHits++;
    else if (m.category === 'quota') stats.quotaRefused++;
    else if (m.category === 'reserved') stats.backfillRefused++;
  }
  if (!cached) stats.failed++;
  const reason = job.spec.alternatives === undefined ? miss.reason : (): AbortReason => alternativesReason(misses, closest);
  const wrote = pend(scope, job, miss.category, reason);
  // a job pended from the cache gets no reservation (DESIGN.md §11) behind the job whose failure
  // the cache holds when that one is reserved (it plans alike), nor one over quota or held back;
  // when that one is not (it committed another alternative), a job behind this one in the order
  // would take the place, and this one, ahead of it, the room when it frees: the promise broken
  const planner = scope.planner;
  const behindReserved = cached && misses.some((m) => m.cachedBy !== undefined && planner?.reserves(m.cachedBy) === true);
  if (miss.category === 'insufficient-resources' && !behindReserved && planner !== null && planner.room > 0) {
    const plans = variants.flatMap((v, i) => (misses[i]!.category === 'insufficient-resources' ? [{ alternative: v.alternative, shape: v.shape, classes: misses[i]!.classes ?? classesFor(scope, v) }] : []));
    reserve(scope, job, plans, plannedRuntime(job, scope.base.policy!));
  } else clearReservation(scope, job);
  report(scope, job.spec.id, variants[closest]!.shape.size, cached ? 'cached' : 'failed', wrote);
}

/**
 * Plans a blocked job's reservation at the earliest start over the plans given (one per variant
 * short of resources; ties to the first): written when new, moved or on other hosts; cleared
 * when it has no finite start.
 */
function reserve(scope: AttemptScope, job: JobState, plans: readonly { alternative: number | undefined; shape: GangShape; classes: readonly HostClass[] }[], runtime: number): void {
  let planned: PlannedReservation | null = null;
  let alternative: number | undefined;
  for (const plan of plans) {
    const p = scope.planner!.plan(job.spec.id, plan.shape, plan.classes, runtime);
    if (p !== null && (planned === null || p.startAt < planned.startAt)) {
      planned = p;
      alternative = plan.alternative;
    }
  }
  if (planned === null) {
    clearReservation(scope, job, 'no-start');
    return;
  }
  scope.planner!.add(planned);
  scope.stats.reserved++;
  const was = job.reservation;
  const hosts = planned.hosts;
  if (was !== undefined && was.startAt === planned.startAt && was.alternative === alternative && was.hosts.length === hosts.length && was.hosts.every((h, i) => h === hosts[i])) return;
  const reserved: GangReserved = { type: 'GangReserved', jobId: job.spec.id, session: scope.session, at: scope.at, startAt: planned.startAt, hosts };
  // the variant it is planned for (DESIGN.md §13); a job without alternatives reserves as it always did
  if (alternative !== undefined) reserved.alternative = alternative;
  emit(scope, [reserved]);
}

/**
 * Ends a job's reservation, if it has one, after an attempt that did not reserve it: it was
 * displaced by the jobs ahead of it, or (no planner) the policy has reservations off.
 */
function clearReservation(scope: AttemptScope, job: JobState, reason: ReservationCleared['reason'] = scope.planner === null ? 'policy' : 'displaced'): void {
  const cleared = reservationCleared(job, scope.session, reason);
  if (cleared.length > 0) emit(scope, cleared);
}

// A failed attempt writes nothing when it ends as the job's recorded pend reason (log growth
// follows change); explain() recomputes the host counts from the state whenever asked. A job
// held back by a reservation (`reserved`) that finds no room at all while other jobs' reservations
// stand still waits behind them: not news either. Under load, room frees and fills between
// sessions and the reserved jobs commit and are replaced within a few sessions; writing each flip
// cost a decision per pending job per session (38,509 of them in 225 transactions of a 200
// gangs/s drill, and still 70,729 when only the reservation the reason named counted).
function pend(scope: AttemptScope, job: JobState, category: AbortCategory, reason: () => AbortReason): boolean {
  const recorded = job.pendReason;
  if (recorded?.category === category) return false;
  if (category === 'insufficient-resources' && recorded?.category === 'reserved' && othersReserved(scope, job)) return false;
  scope.stats.abortsWritten++;
  const event: GangAborted = { type: 'GangAborted', jobId: job.spec.id, session: scope.session, at: scope.at, final: false, reason: reason() };
  emit(scope, [event]);
  return true;
}

/**
 * Whether reservations of other jobs stand: another pending job was reserved when the session
 * began, or one was reserved in it so far (the order by shares changes between sessions: a
 * reserved job may come after the jobs it holds back). Reservations off: none.
 */
function othersReserved(scope: AttemptScope, job: JobState): boolean {
  if (scope.planner === null) return false;
  return scope.reservedAtStart > (job.reservation === undefined ? 0 : 1) || scope.planner.reservations.length > 0;
}

// How close a variant that missed came to committing (DESIGN.md §13): it fits but for a
// reservation; it would fit an emptier cluster; only its queue's max stops it; no plan fits even
// the empty cluster; no host passes its select.
function closeness(category: AbortCategory): number {
  switch (category) {
    case 'reserved': return 5;
    case 'insufficient-resources': return 4;
    case 'quota': return 3;
    case 'placement-unsatisfiable': return 2;
    default: return 1;
  }
}

/** The reason of a failed attempt of a job with alternatives: the closest variant's category and hosts, how each fared. */
function alternativesReason(misses: readonly Miss[], closest: number): AbortReason {
  const reasons = misses.map((m) => m.reason());
  const cached = misses.every((m) => m.cached);
  return {
    category: reasons[closest]!.category,
    message: `no alternative fits: ${reasons.map((r, i) => `alternative ${i}: ${r.category}${misses[i]!.cached ? ' (cached)' : ''}: ${r.message}`).join('; ')}`,
    hosts: reasons[closest]!.hosts,
    ...(cached ? { cached: true as const } : {}),
    ...(reasons[closest]!.by === undefined ? {} : { by: reasons[closest]!.by }),
    alternatives: reasons.map((r, i) => ({ category: r.category, hosts: r.hosts, ...(misses[i]!.cached ? { cached: true as const } : {}) })),
  };
}
