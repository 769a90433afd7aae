import type { JobRequest } from '../contract/types.ts';
import type { GangResized } from '../events.ts';
import { activeRequest, heldMembers } from '../jobRequests.ts';
import { allocateGang } from '../placement/allocateGang.ts';
import type { Avoid } from '../placement/allocateGang.ts';
import type { GangShape } from '../placement/gangShape.ts';
import { mostMembers } from '../placement/hostTrees.ts';
import type { Statement } from '../placement/statement.ts';
import { addAllocation } from '../queues/queueUsage.ts';
import type { JobState } from '../state.ts';
import { allocationsOf, boundOf } from './commitEvents.ts';
import { countsDemand, fullCounts, heldCounts, largestFit, minCounts, partShape, resizedAllocations } from './elasticGangs.ts';
import { plannedRuntime } from './runtimeLimits.ts';
import { emit, forgetShares } from './sessionScope.ts';
import type { AttemptScope } from './sessionScope.ts';
import { classesFor, variantsOf } from './sessionVariants.ts';
import type { Placed, Variant } from './sessionVariants.ts';

/**
 * A running elastic gang below its full size grows (DESIGN.md §13): as many more members as fit
 * now, each role in placement order, within its queues' max and delaying no reservation, on hosts
 * that keep its placement (`growthHosts`); all the members added at once, or nothing written.
 */
export function grow(scope: AttemptScope, job: JobState): void {
  const id = job.spec.id;
  // a gang whose members have begun to finish is winding down, not growing
  if (scope.resized.has(id) || job.members.some((m) => m !== null && m.done)) return;
  const request = activeRequest(job);
  const variant = variantsOf(scope, job)[job.alternative ?? 0]!;
  const classes = classesFor(scope, variant);
  if (classes.length === 0) return;
  const held = heldCounts(job, request);
  // a role none of whose hosts has room for one more member now cannot grow (most gangs waiting
  // to grow, on a busy cluster): no search for it
  const index = scope.index;
  const room = fullCounts(request).map((c, i) => {
    const r = request.roles[i]!.resources;
    return c > held[i]! && classes.some((k) => mostMembers(k, r, request.placement.gpuLocality && r.gpus > 0, 'on') >= 1) ? c - held[i]! : 0;
  });
  if (room.every((n) => n === 0)) return;
  const ledger = scope.ledger;
  const leaf = ledger?.leafOf(job.spec) ?? '';
  const planner = scope.planner;
  const end = scope.at + (planner === null ? 0 : plannedRuntime(job, scope.base.policy!));
  const allowed = growthHosts(scope, job, request);
  if (allowed === null) return;
  const reserved = planner?.avoid(end) ?? null;
  const avoid: Avoid = (h, demand) => !allowed(h) || (reserved !== null && reserved(h, demand));
  const placeExtra = (extra: readonly number[]): Statement | null => {
    // a search that passes hosts over says nothing about the cluster: it feeds no memo of failures
    const stmt = allocateGang(index, id, partShape(request, extra, held), classes, scope.stats, avoid, 'read');
    if (stmt !== null && planner !== null && planner.violates(end, stmt.held)) {
      stmt.discard();
      return null;
    }
    return stmt;
  };
  scope.stats.allocatorRuns++;
  const grown = largestPlacement(scope, id, request, leaf, room.map(() => 0), room, placeExtra);
  if (grown === null) return;
  const { counts: extra, stmt } = grown;
  const added = extra.reduce((n, k) => n + k, 0);
  planner?.committed(id, stmt.held, end);
  const bound = boundOf(id, stmt);
  const gpus = new Map(bound.map((b) => [b.member, b.gpuIds]));
  const allocations = resizedAllocations(job, new Set(), allocationsOf(scope, stmt), (m) => gpus.get(m) ?? job.members[m]?.gpuIds ?? []);
  const resized: GangResized = { type: 'GangResized', jobId: id, session: scope.session, at: scope.at, allocations, members: heldMembers(job) + added };
  emit(scope, [...stmt.events, ...bound, resized]);
  if (ledger !== null) {
    const demand = countsDemand(request, extra);
    ledger.add(leaf, demand, 1);
    addAllocation(scope.free, demand, -1);
  }
  scope.resized.add(id);
  scope.running?.forget(id);
  scope.stats.grown++;
  scope.stats.membersPlaced += added;
  forgetShares(scope, job.spec.identity);
}

/**
 * The hosts an elastic gang's new members may take so that the whole gang keeps its placement
 * (DESIGN.md §13), or null when none may: same-node, only its host; spread and ptile, only hosts
 * it does not use yet (the new members are placed by the same rule among themselves); GPUs with
 * gpuLocality, only new hosts (a host's NVLink domain was chosen for the members there); with a
 * required topology, only hosts in its domain.
 */
function growthHosts(scope: AttemptScope, job: JobState, request: JobRequest): ((h: number) => boolean) | null {
  const index = scope.index;
  const used = new Set<number>();
  for (const m of job.members) {
    const h = m === null ? undefined : index.hostOf.get(m.node);
    if (h !== undefined) used.add(h);
  }
  const p = request.placement;
  const gpus = request.roles.some((r) => r.resources.gpus > 0);
  if (p.policy === 'same-node' && p.gpuLocality && gpus) return null;
  const newOnly = p.policy === 'spread' || p.ptile !== undefined || (p.gpuLocality && gpus);
  const topology = p.topology?.mode === 'required' ? p.topology.key : null;
  const labelOf = (h: number): string | number | undefined => index.classes[index.cls[h]!]!.spec.labels[topology!];
  const domain = topology === null || used.size === 0 ? undefined : labelOf(used.values().next().value!);
  return (h) => {
    if (p.policy === 'same-node' ? !used.has(h) : newOnly && used.has(h)) return false;
    return topology === null || labelOf(h) === domain;
  };
}

/**
 * An elastic gang placed at its minimum, grown to the largest size that fits now (DESIGN.md
 * §13: each role in placement order, within its queues' max) and placed at that size instead;
 * `place` places it at a size as the minimum was placed (delaying no reservation).
 */
export function enlarge(scope: AttemptScope, job: JobState, variant: Variant, minimum: Statement, leaf: string, place: (shape: GangShape) => Statement | null): Placed {
  const request = variant.request;
  minimum.discard();
  const { counts, stmt } = largestPlacement(scope, job.spec.id, request, leaf, minCounts(request), fullCounts(request), (c) => place(partShape(request, c)))!;
  return { stmt, shape: partShape(request, counts), demand: scope.ledger === null ? null : countsDemand(request, counts) };
}

/**
 * The largest counts from `lower` up to `upper` (`largestFit`: each role in placement order) at
 * which the job's queues admit `counts` members and `place` places them, placed; null when that
 * is no member at all (growth from 0 that found no room).
 */
function largestPlacement(scope: AttemptScope, id: string, request: JobRequest, leaf: string, lower: readonly number[], upper: readonly number[], place: (counts: readonly number[]) => Statement | null): { counts: number[]; stmt: Statement } | null {
  const ledger = scope.ledger;
  const placeAt = (counts: readonly number[]): Statement | null =>
    (ledger !== null && ledger.quotaIssue(leaf, countsDemand(request, counts)) !== null ? null : place(counts));
  const counts = largestFit(request, lower, upper, (c) => {
    const probe = placeAt(c);
    probe?.discard();
    return probe !== null;
  });
  if (counts.every((n) => n === 0)) return null;
  const stmt = placeAt(counts);
  if (stmt === null) throw new Error(`elastic job ${id} fitted ${counts.join('+')} members it then could not place`);
  return { counts, stmt };
}
