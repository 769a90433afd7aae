import { leafGet, shardLeaf, shardLeaves } from '../shard.ts';
import type { ShardLeaf } from '../shard.ts';
import type { JobState, State } from '../state.ts';
import { nextLimit } from './runtimeLimits.ts';

interface ShardDeadline {
  jobs: ShardLeaf<JobState> | null | undefined;
  earliest: number | null;
}

// Earliest deadline per pending leaf, valid while both the pending leaf and the jobs leaf are the
// same frozen objects (structural sharing): only changed leaves are rescanned.
const memo = new WeakMap<ShardLeaf<string>, ShardDeadline>();

/** A pending job's timeout deadline (pendingSince + timeoutMs), or null without a timeout. */
export function deadlineOf(job: JobState): number | null {
  return job.spec.timeoutMs === undefined ? null : job.pendingSince + job.spec.timeoutMs;
}

/**
 * The earliest time a session must run by itself, or null: a pending job's timeout or (under a
 * policy) a running gang's runtime limit, when the leader must wake up to abort or stop one.
 */
export function nextDeadline(state: State): number | null {
  let earliest: number | null = nextLimit(state);
  for (const [shard, pending] of shardLeaves(state.pending)) {
    const d = shardDeadline(pending, shardLeaf(state.jobs, shard));
    if (d !== null && (earliest === null || d < earliest)) earliest = d;
  }
  return earliest;
}

/**
 * Whether a scheduling session could change anything: a fact that could change an outcome
 * arrived since the last session (state.epoch moved), or a timeout or runtime limit is due.
 * An idle cluster needs no session, so it writes nothing.
 */
export function needsSession(state: State, at: number): boolean {
  if (state.epoch > state.sessionEpoch) return true;
  const d = nextDeadline(state);
  return d !== null && d <= at;
}

/** Pending jobs whose timeout is due at `at`, by id. */
export function dueJobs(state: State, at: number): JobState[] {
  const out: JobState[] = [];
  for (const [shard, pending] of shardLeaves(state.pending)) {
    const jobs = shardLeaf(state.jobs, shard);
    const d = shardDeadline(pending, jobs);
    if (d === null || d > at) continue;
    for (const id of pending) {
      const job = leafGet(jobs, id);
      if (job === undefined) continue;
      const deadline = deadlineOf(job);
      if (deadline !== null && deadline <= at) out.push(job);
    }
  }
  return out.sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0));
}

function shardDeadline(pending: ShardLeaf<string>, jobs: ShardLeaf<JobState> | null | undefined): number | null {
  const cached = memo.get(pending);
  if (cached !== undefined && cached.jobs === jobs) return cached.earliest;
  let earliest: number | null = null;
  for (const id of pending) {
    const job = leafGet(jobs, id);
    if (job === undefined) continue;
    const d = deadlineOf(job);
    if (d !== null && (earliest === null || d < earliest)) earliest = d;
  }
  // a shard that can still change in place (a draft's or a bulk replay's copy) is never memoised
  if (Object.isFrozen(pending) && (jobs === undefined || jobs === null || Object.isFrozen(jobs))) memo.set(pending, { jobs, earliest });
  return earliest;
}
