import type { JobRequest, RoleSpec } from '../contract/types.ts';
import type { Allocation, AllocationResources } from '../events.ts';
import { memberResources } from '../lifecycle.ts';
import { gangShape } from '../placement/gangShape.ts';
import type { GangShape, RoleShape } from '../placement/gangShape.ts';
import { activeRequest, isElastic, requestSize } from '../jobRequests.ts';
import type { JobState } from '../state.ts';
import { gangRequest } from './queueLedger.ts';

// Elastic gangs (DESIGN.md §13): the sizes a gang is placed at, grown to and shrunk from. Counts
// are per role in the spec's order. Member numbers stay those of the full gang: role r's members
// are firstMember(r) .. firstMember(r) + count(r) - 1, and a gang holds a prefix of each role's
// range (it grows at the end of the prefix and shrinks from it), so a role's newest member is
// its highest bound number.

/** Each role's minimum (its minCount, or its count for a role that is not elastic), in spec order. */
export function minCounts(request: JobRequest): number[] {
  return request.roles.map((r) => r.minCount ?? r.count);
}

/** Each role's count, in spec order. */
export function fullCounts(request: JobRequest): number[] {
  return request.roles.map((r) => r.count);
}

/** Each role's first member number, in spec order (members are numbered across roles in that order). */
function firstMembers(request: JobRequest): number[] {
  const firsts = new Array<number>(request.roles.length);
  for (const role of gangShape(request).roles) firsts[role.order] = role.firstMember;
  return firsts;
}

/** How many members of each role (spec order) a running gang holds now. */
export function heldCounts(job: JobState, request: JobRequest): number[] {
  const at = new Map(request.roles.map((r, i) => [r.name, i]));
  const counts = request.roles.map(() => 0);
  for (const m of job.members) {
    if (m === null) continue;
    const i = at.get(m.role);
    if (i !== undefined) counts[i]!++;
  }
  return counts;
}

/**
 * The placement shape of `extra[r]` members of each role starting after the first `from[r]` of
 * the role's range (all zero: the gang from its first members); roles with none are left out.
 */
export function partShape(request: JobRequest, extra: readonly number[], from: readonly number[] | null = null): GangShape {
  const full = gangShape(request);
  const roles: RoleShape[] = [];
  let size = 0;
  for (const role of full.roles) {
    const count = extra[role.order]!;
    if (count === 0) continue;
    roles.push({ ...role, count, firstMember: role.firstMember + (from?.[role.order] ?? 0) });
    size += count;
  }
  return { size, roles, placement: full.placement };
}

/** What `counts` members of each role ask of their queues. */
export function countsDemand(request: JobRequest, counts: readonly number[]): AllocationResources {
  return gangRequest({ roles: request.roles.map((r, i): RoleSpec => ({ ...r, count: counts[i]! })) });
}

/**
 * The largest counts between `lower` and `upper` that `fits` accepts (DESIGN.md §13): every role
 * at `lower` first (the caller knows that fits), then each role grown in placement order
 * (heaviest first) as far as it fits with the roles before it grown: the whole role, else one
 * more member, else the largest count between found by halving. `fits` is asked only about counts
 * above `lower`.
 */
export function largestFit(request: JobRequest, lower: readonly number[], upper: readonly number[], fits: (counts: readonly number[]) => boolean): number[] {
  const counts = [...lower];
  for (const role of gangShape(request).roles) {
    const r = role.order;
    let lo = counts[r]!;
    let hi = upper[r]!;
    if (lo >= hi) continue;
    // the whole role first: a cluster with room takes it in one try; then one more member: a
    // cluster without room for it (most gangs waiting to grow) says so in one more
    counts[r] = hi;
    if (fits(counts)) continue;
    counts[r] = lo + 1;
    if (lo + 1 === hi || !fits(counts)) {
      counts[r] = lo;
      continue;
    }
    lo++;
    hi--;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      counts[r] = mid;
      if (fits(counts)) lo = mid;
      else hi = mid - 1;
    }
    counts[r] = lo;
  }
  return counts;
}

/**
 * The members a running elastic gang may give up to preemption, newest first: in each role, the
 * bound members above its minimum, highest number first; roles last in the spec order first.
 */
export function surplusMembers(job: JobState, request: JobRequest): number[] {
  const held = heldCounts(job, request);
  const mins = minCounts(request);
  const out: number[] = [];
  const firsts = firstMembers(request);
  for (let r = request.roles.length - 1; r >= 0; r--) {
    for (let k = held[r]! - 1; k >= mins[r]!; k--) out.push(firsts[r]! + k);
  }
  return out;
}

/**
 * A gang's allocations with `members` no longer in them (shrinking) and `added` joined (growing),
 * one per (node, role) in the order they first appear, members ascending, each member's devices in
 * member order, resources scaled to the members. `gpusOf` gives a member's device ids.
 */
export function resizedAllocations(job: JobState, removed: ReadonlySet<number>, added: readonly Allocation[], gpusOf: (member: number) => readonly number[]): Allocation[] {
  const byKey = new Map<string, { node: string; role: string; members: number[] }>();
  for (const a of [...job.allocations, ...added]) {
    const key = `${a.node}\u0000${a.role}`;
    let entry = byKey.get(key);
    if (entry === undefined) byKey.set(key, (entry = { node: a.node, role: a.role, members: [] }));
    for (const m of a.members) if (!removed.has(m) && !entry.members.includes(m)) entry.members.push(m);
  }
  const out: Allocation[] = [];
  for (const { node, role, members } of byKey.values()) {
    if (members.length === 0) continue;
    members.sort((a, b) => a - b);
    const per = memberResources(job, role);
    out.push({
      node,
      role,
      members,
      gpuIds: members.flatMap((m) => [...gpusOf(m)]),
      resources: { cpu: per.cpu * members.length, memoryMb: per.memoryMb * members.length, gpus: per.gpus * members.length },
    });
  }
  return out;
}

/**
 * What is wrong with a running gang's size (DESIGN.md §7, §13), as messages (empty: nothing): it
 * holds every member, or, elastic, a prefix of each role's members between its minimum and its count.
 */
export function runningSizeIssues(job: JobState): string[] {
  const request = activeRequest(job);
  if (!isElastic(request)) {
    const unbound = job.members.flatMap((m, i) => (m === null ? [i] : []));
    return unbound.length === 0 ? [] : [`runs with member(s) ${unbound.join(',')} unbound`];
  }
  const out: string[] = [];
  const firsts = firstMembers(request);
  request.roles.forEach((role, r) => {
    const bound = job.members.slice(firsts[r], firsts[r]! + role.count).map((m) => m !== null);
    const n = bound.filter(Boolean).length;
    if (bound.some((b, k) => b !== k < n)) out.push(`role ${role.name} holds members that are not a prefix of its range`);
    if (n < (role.minCount ?? role.count) || n > role.count) out.push(`role ${role.name} runs with ${n} members, outside ${role.minCount ?? role.count}..${role.count}`);
  });
  const size = requestSize(request);
  if (job.members.length > size) out.push(`${job.members.length} member slots for a gang of ${size}`);
  return out;
}
