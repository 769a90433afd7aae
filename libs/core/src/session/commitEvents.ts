import type { Allocation, AllocationResources, GangCommitted, MemberBound, Rendezvous, SchedulerEvent } from '../events.ts';
import type { Statement } from '../placement/statement.ts';
import { addAllocation } from '../queues/queueUsage.ts';
import { shardGet } from '../shard.ts';
import type { JobState } from '../state.ts';
import { rendezvousAt } from './rendezvousAt.ts';
import { emit, forgetShares } from './sessionScope.ts';
import type { AttemptScope } from './sessionScope.ts';
import type { Placed, Variant } from './sessionVariants.ts';

/**
 * Writes a placed gang's commit as one unit: `before` (a preemption's stops), the statement in
 * order (debits and reversals, failed plans included), the binds and the `GangCommitted`; then
 * counts it against its queues and the free resources.
 */
export function commit(scope: AttemptScope, job: JobState, variant: Variant, placed: Placed, before: readonly SchedulerEvent[], rendezvous: Rendezvous | undefined): void {
  const id = job.spec.id;
  const { stmt, shape, demand } = placed;
  const committed: GangCommitted = { type: 'GangCommitted', jobId: id, session: scope.session, at: scope.at, allocations: allocationsOf(scope, stmt) };
  // which variant committed (DESIGN.md §13); a job without alternatives commits as it always did
  if (variant.alternative !== undefined) committed.alternative = variant.alternative;
  // contract v1.2: where the members meet, and the attempt after the first
  if (rendezvous !== undefined) committed.rendezvous = rendezvous;
  if ((job.attempt ?? 0) > 0) committed.attempt = job.attempt;
  // the whole Statement in order: debits and reversals (failed plans included), binds, decision
  emit(scope, [...before, ...stmt.events, ...boundOf(id, stmt), committed]);
  if (scope.ledger !== null) {
    scope.ledger.add(scope.ledger.leafOf(job.spec), demand!, 1);
    addAllocation(scope.free, demand!, -1);
  }
  scope.stats.committed++;
  scope.stats.membersPlaced += shape.size;
  forgetShares(scope, job.spec.identity);
}

/**
 * The binds of a statement's held debits, by member number (an elastic gang's numbers may have
 * gaps); a member without devices shares the debit's empty device list (events' values are never
 * mutated, and the state keeps a bind's list for as long as it keeps the job).
 */
export function boundOf(jobId: string, stmt: Statement): MemberBound[] {
  const bound: MemberBound[] = [];
  for (const d of stmt.held) {
    const e = d.event;
    const none = e.gpuIds.length === 0 || d.gpusPerMember === 0;
    e.members.forEach((member, k) => {
      const gpuIds = none ? e.gpuIds : e.gpuIds.slice(k * d.gpusPerMember, (k + 1) * d.gpusPerMember);
      bound.push({ type: 'MemberBound', jobId, member, node: e.node, role: e.role, gpuIds });
    });
  }
  return bound.sort((a, b) => a.member - b.member);
}

/**
 * A statement's held debits as allocations, in the order of their first members; their hosts are
 * touched (placed on). An allocation shares its debit's member and device lists, and allocations
 * of equal resources share one object: the state keeps them for as long as it keeps the job, and
 * events' values are never mutated.
 */
export function allocationsOf(scope: AttemptScope, stmt: Statement): Allocation[] {
  const held = [...stmt.held].sort((a, b) => a.event.members[0]! - b.event.members[0]!);
  let last: AllocationResources | null = null;
  return held.map((d) => {
    const e = d.event;
    scope.index.touch(d.host);
    const r = e.resources;
    if (last === null || last.cpu !== r.cpu || last.memoryMb !== r.memoryMb || last.gpus !== r.gpus) last = { cpu: r.cpu, memoryMb: r.memoryMb, gpus: r.gpus };
    return { node: e.node, role: e.role, members: e.members, gpuIds: e.gpuIds, resources: last };
  });
}

/**
 * Where a placement's members would meet (DESIGN.md §15): on a log decided as contract v1.1,
 * undefined; else the rendezvous on member 0's host, or that host when it has no free port
 * (`freed`: ports of gangs stopped in the same transaction).
 */
export function rendezvousOf(scope: AttemptScope, stmt: Statement, freed: readonly Rendezvous[] = []): { rendezvous: Rendezvous } | { exhausted: string } | undefined {
  if (scope.base.contract === undefined) return undefined;
  let first = stmt.held[0]!;
  for (const d of stmt.held) if (d.event.members[0]! < first.event.members[0]!) first = d;
  const nodeId = first.event.node;
  const ports = new Set(freed.filter((r) => r.node === nodeId).map((r) => r.port));
  const rendezvous = rendezvousAt(shardGet(scope.draft.nodes, nodeId)!, ports);
  return rendezvous === null ? { exhausted: nodeId } : { rendezvous };
}
