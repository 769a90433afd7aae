import type { Policy } from '../contract/types.ts';
import { leafGet, shardLeaf, shardLeaves } from '../shard.ts';
import type { ShardLeaf } from '../shard.ts';
import type { JobState, State } from '../state.ts';

// Runtime limits and expected ends (DESIGN.md §11). Only a log with a policy (contract v1.1)
// enforces limits; a log without one decides as contract v1 did.

// Earliest limit per leaf of the limited table, valid while both it and the jobs leaf beside it
// are the same frozen objects (structural sharing): only changed leaves are rescanned.
const memo = new WeakMap<ShardLeaf<string>, { jobs: ShardLeaf<JobState> | null | undefined; earliest: number | null }>();

/** When a running gang's runtime limit falls due (its commit plus `runtimeLimitMs`), or null without one. */
export function limitOf(job: JobState): number | null {
  if (job.status !== 'running' || job.spec.runtimeLimitMs === undefined || job.committedAt === undefined) return null;
  return job.committedAt + job.spec.runtimeLimitMs;
}

/** How long a gang runs for planning: its limit, or the policy's assumption; a kept-warm gang without a limit runs forever. */
export function plannedRuntime(job: JobState, policy: Policy): number {
  if (job.spec.runtimeLimitMs !== undefined) return job.spec.runtimeLimitMs;
  return job.spec.minInstances > 0 ? Number.POSITIVE_INFINITY : policy.assumedRuntimeMs;
}

/**
 * When a running gang is expected to end, for planning at `at`: its commit plus its planned
 * runtime, never before `at` (a gang committed before the policy was set counts from `at`).
 */
export function expectedEnd(job: JobState, policy: Policy, at: number): number {
  return Math.max(at, (job.committedAt ?? at) + plannedRuntime(job, policy));
}

/** The earliest runtime limit of a running gang, or null (none, or no policy in force). */
export function nextLimit(state: State): number | null {
  if (state.policy === undefined || state.limited === undefined) return null;
  let earliest: number | null = null;
  for (const [shard, ids] of shardLeaves(state.limited)) {
    const d = leafLimit(ids, shardLeaf(state.jobs, shard));
    if (d !== null && (earliest === null || d < earliest)) earliest = d;
  }
  return earliest;
}

/** Running gangs whose runtime limit is due at `at`, by id (none without a policy). */
export function dueLimits(state: State, at: number): JobState[] {
  if (state.policy === undefined || state.limited === undefined) return [];
  const out: JobState[] = [];
  for (const [shard, ids] of shardLeaves(state.limited)) {
    const jobs = shardLeaf(state.jobs, shard);
    const d = leafLimit(ids, jobs);
    if (d === null || d > at) continue;
    for (const id of ids) {
      const job = leafGet(jobs, id);
      const limit = job === undefined ? null : limitOf(job);
      if (limit !== null && limit <= at) out.push(job!);
    }
  }
  return out.sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0));
}

function leafLimit(ids: ShardLeaf<string>, jobs: ShardLeaf<JobState> | null | undefined): number | null {
  const cached = memo.get(ids);
  if (cached !== undefined && cached.jobs === jobs) return cached.earliest;
  let earliest: number | null = null;
  for (const id of ids) {
    const job = leafGet(jobs, id);
    const d = job === undefined ? null : limitOf(job);
    if (d !== null && (earliest === null || d < earliest)) earliest = d;
  }
  // a leaf that can still change in place (a draft's copy) is never memoised
  if (Object.isFrozen(ids) && (jobs === undefined || jobs === null || Object.isFrozen(jobs))) memo.set(ids, { jobs, earliest });
  return earliest;
}
