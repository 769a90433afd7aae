import type { JobState, State } from '../state.ts';
import { JobDeadlines } from './jobDeadlines.ts';
import { nextLimit } from './runtimeLimits.ts';

// pending jobs' timeouts
const timeouts = new JobDeadlines(deadlineOf);

/** A pending job's timeout deadline (pendingSince + timeoutMs), or null without a timeout. */
export function deadlineOf(job: JobState): number | null {
  return job.spec.timeoutMs === undefined ? null : job.pendingSince + job.spec.timeoutMs;
}

/**
 * The earliest time a session must run by itself, or null: a pending job's timeout or (under a
 * policy) a running gang's runtime limit, when the leader must wake up to abort or stop one.
 */
export function nextDeadline(state: State): number | null {
  const limit = nextLimit(state);
  const timeout = timeouts.earliest(state.pending, state.jobs);
  return limit === null ? timeout : timeout === null ? limit : Math.min(limit, timeout);
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
  return timeouts.due(state.pending, state.jobs, at);
}
