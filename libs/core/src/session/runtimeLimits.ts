import type { Policy } from '../contract/types.ts';
import { shardLeaves } from '../shard.ts';
import type { ShardLeaf } from '../shard.ts';
import type { JobState, State } from '../state.ts';

// Runtime limits and expected ends (DESIGN.md §11). Only a log with a policy (contract v1.1)
// enforces limits; a log without one decides as contract v1 did.

// Earliest limit per jobs leaf, valid while the leaf is the same frozen object (only changed leaves are rescanned).
const memo = new WeakMap<ShardLeaf<JobState>, number | null>();

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
  if (state.policy === undefined) return null;
  let earliest: number | null = null;
  for (const [, leaf] of shardLeaves(state.jobs)) {
    const d = leafLimit(leaf);
    if (d !== null && (earliest === null || d < earliest)) earliest = d;
  }
  return earliest;
}

/** Running gangs whose runtime limit is due at `at`, by id (none without a policy). */
export function dueLimits(state: State, at: number): JobState[] {
  if (state.policy === undefined) return [];
  const out: JobState[] = [];
  for (const [, leaf] of shardLeaves(state.jobs)) {
    const d = leafLimit(leaf);
    if (d === null || d > at) continue;
    for (const job of leaf) {
      const limit = limitOf(job);
      if (limit !== null && limit <= at) out.push(job);
    }
  }
  return out.sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0));
}

function leafLimit(leaf: ShardLeaf<JobState>): number | null {
  const cached = memo.get(leaf);
  if (cached !== undefined) return cached;
  let earliest: number | null = null;
  for (const job of leaf) {
    const d = limitOf(job);
    if (d !== null && (earliest === null || d < earliest)) earliest = d;
  }
  // a leaf that can still change in place (a draft's copy) is never memoised
  if (Object.isFrozen(leaf)) memo.set(leaf, earliest);
  return earliest;
}
