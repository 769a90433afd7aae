import type { AbortReason, Rendezvous, SchedulerEvent } from '../events.ts';
import { heldMembers, isElastic } from '../jobRequests.ts';
import { releaseAll } from '../lifecycle.ts';
import { allocateGang } from '../placement/allocateGang.ts';
import type { GangShape } from '../placement/gangShape.ts';
import type { Statement } from '../placement/statement.ts';
import { addAllocation } from '../queues/queueUsage.ts';
import type { JobState } from '../state.ts';
import { commit, rendezvousOf } from './commitEvents.ts';
import { resizedAllocations } from './elasticGangs.ts';
import { enlarge } from './elasticGrowth.ts';
import { chooseVictims, restoreVictims } from './preemption.ts';
import type { Preemptor, VictimKind, Victims } from './preemption.ts';
import { plannedRuntime } from './runtimeLimits.ts';
import { forgetShares, report } from './sessionScope.ts';
import type { AttemptScope } from './sessionScope.ts';
import { classesFor } from './sessionVariants.ts';
import type { Variant } from './sessionVariants.ts';

/**
 * Tries to place a blocked job by stopping running gangs (DESIGN.md §12): the victims' stops and
 * requeues and the job's commit are one unit, so one transaction. False when no victim set
 * makes it fit (everything is then as it was).
 */
export function preempt(scope: AttemptScope, job: JobState, variant: Variant, leaf: string): boolean {
  const ledger = scope.ledger!;
  const key = preemptionKey(variant.fingerprint, leaf, job.spec.priority);
  if (scope.noVictims.has(key)) return false;
  const classes = classesFor(scope, variant);
  if (classes.length === 0) return false;
  const { shape } = variant;
  const end = scope.at + (scope.planner === null ? 0 : plannedRuntime(job, scope.base.policy!));
  const p: Preemptor = { job, leaf, shape, classes, request: variant.demand!, avoid: scope.planner?.avoid(end) ?? null };
  const victims = chooseVictims(p, ledger, scope.index, scope.candidates!, scope.stats, scope.free);
  if (victims === null) {
    scope.noVictims.add(key);
    return false;
  }
  // more is free now than what this session learnt about failures assumed
  for (const c of scope.index.classes) c.negatives = [];
  scope.unsatisfiable.clear();
  scope.heldBack.clear();
  scope.noVictims.clear();
  scope.candidates!.clear();
  const stmt = allocateGang(scope.index, job.spec.id, shape, classes, scope.stats, p.avoid);
  if (stmt === null) throw new Error(`preemption for job ${job.spec.id} found victims but no placement`);
  // the victims stopped whole give their rendezvous ports back in the same transaction
  const freed: Rendezvous[] = [];
  for (const { gang } of victims.gangs) if (gang.slice === null && gang.job.rendezvous !== undefined) freed.push(gang.job.rendezvous);
  const meet = rendezvousOf(scope, stmt, freed);
  if (meet !== undefined && 'exhausted' in meet) {
    // no rendezvous port on member 0's host even with the victims stopped: nobody is stopped
    stmt.discard();
    restoreVictims(victims, scope.index, ledger);
    return false;
  }
  scope.stats.preemptions++;
  const before = stops(scope, job, leaf, victims);
  // an elastic preemptor takes what the stops left free beyond its minimum too (at its minimum
  // after all when the larger placement moved member 0 to a host without a free port)
  const place = (s: GangShape): Statement | null => allocateGang(scope.index, job.spec.id, s, classes, scope.stats, p.avoid);
  let placed = isElastic(variant.request) ? enlarge(scope, job, variant, stmt, leaf, place) : { stmt, shape, demand: variant.demand };
  let rendezvous = placed.stmt === stmt ? meet : rendezvousOf(scope, placed.stmt, freed);
  if (rendezvous !== undefined && 'exhausted' in rendezvous) {
    placed.stmt.discard();
    placed = { stmt: place(shape)!, shape, demand: variant.demand };
    rendezvous = rendezvousOf(scope, placed.stmt, freed);
  }
  if (rendezvous !== undefined && 'exhausted' in rendezvous) throw new Error(`preemption for job ${job.spec.id} placed at its minimum twice differently`);
  scope.planner?.committed(job.spec.id, placed.stmt.held, end);
  commit(scope, job, variant, placed, before, rendezvous?.rendezvous);
  // the victims' users hold less now: the jobs still to try are ordered by the shares as they are
  scope.order!.rekey();
  report(scope, job.spec.id, shape.size, 'committed', true);
  return true;
}

/** The key of `AttemptScope.noVictims`: a request's fingerprint, the preemptor's leaf and its priority. */
export function preemptionKey(fingerprint: string, leaf: string, priority: number): string {
  return `${fingerprint}\u0000${leaf}\u0000${priority}`;
}

/**
 * The victims' events, job by job in the order first taken: a gang taken whole is released,
 * aborted (category `preempted`, by the preemptor) and requeued; an elastic gang that gives up
 * only members above its minimum (DESIGN.md §13) releases those and writes `GangResized`.
 */
function stops(scope: AttemptScope, preemptor: JobState, leaf: string, victims: Victims): SchedulerEvent[] {
  const { session, at } = scope;
  const out: SchedulerEvent[] = [];
  const by = preemptor.spec.id;
  const byJob = new Map<string, { job: JobState; kind: VictimKind; leaf: string; whole: boolean; members: Set<number> }>();
  for (const { gang, kind } of victims.gangs) {
    const id = gang.job.spec.id;
    let taken = byJob.get(id);
    if (taken === undefined) byJob.set(id, (taken = { job: gang.job, kind, leaf: gang.leaf, whole: false, members: new Set() }));
    if (gang.slice === null) taken.whole = true;
    else for (const m of gang.slice) taken.members.add(m);
    for (const u of gang.uses) scope.index.touch(u.host);
    addAllocation(scope.free, gang.request);
  }
  for (const { job: v, kind, leaf: victimLeaf, whole, members } of byJob.values()) {
    const id = v.spec.id;
    const why = kind === 'reclaim'
      ? `queue ${leaf} reclaims its guarantee from queue ${victimLeaf}, which borrows`
      : `priority ${preemptor.spec.priority} is above its ${v.spec.priority} in queue ${leaf}`;
    if (whole) {
      const reason: AbortReason = { category: 'preempted', message: `preempted by job ${by}: ${why}; the whole gang is released and requeued`, hosts: {}, by };
      out.push(...releaseAll(v, 'preempted'), { type: 'GangAborted', jobId: id, session, at, final: false, reason }, { type: 'JobPended', jobId: id, at });
      scope.planner?.preempted(id);
      scope.stats.preempted++;
      // an elastic gang stopped whole is no longer one to grow in its turn this session
      scope.resized.add(id);
    } else {
      const allocations = resizedAllocations(v, members, [], (m) => v.members[m]?.gpuIds ?? []);
      out.push(...releaseAll(v, 'preempted', members), { type: 'GangResized', jobId: id, session, at, allocations, members: heldMembers(v) - members.size, by });
      scope.resized.add(id);
      scope.stats.shrunk++;
    }
    scope.running!.forget(id);
    forgetShares(scope, v.spec.identity);
  }
  return out;
}
