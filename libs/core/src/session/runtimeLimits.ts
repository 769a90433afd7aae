import type { Policy } from '../contract/types.ts';
import type { JobState } from '../state.ts';

// Runtime limits and expected ends (DESIGN.md §11). Only a log with a policy (contract v1.1)
// enforces limits; a log without one decides as contract v1 did.

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
