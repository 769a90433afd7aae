import type { JobState, State } from '../state.ts';
import { JobDeadlines } from './jobDeadlines.ts';
import { nextLimit } from './runtimeLimits.ts';

// pending jobs' timeouts
const timeouts = new JobDeadlines(deadlineOf);

/** A pending job's timeout deadline (pendingSince + timeoutMs), or null without a timeout. */
export function deadlineOf(job: JobState): number | null {
  return job.spec.timeoutMs === undefined ? null : job.pendingSince + job.spec.timeoutMs;
}

// running gangs' commits, over the table of gangs within their minimum runtime before preemption
const guards = new JobDeadlines((job) => job.committedAt ?? null);

/**
 * When the first guarded gang may become a victim of preemption (DESIGN.md §12), or null: its
 * commit plus the policy's `minRuntimeBeforePreemptionMs`.
 */
export function nextGuardExpiry(state: State): number | null {
  if (state.guarded === undefined) return null;
  const first = guards.earliest(state.guarded, state.jobs);
  return first === null ? null : first + (state.policy?.minRuntimeBeforePreemptionMs ?? 0);
}

// restarting gangs' backoffs (contract v1.2), over the table of jobs waiting one out
const restarts = new JobDeadlines((job) => job.notBefore ?? null);

/** When the first gang waiting out a restart's backoff may be placed again (DESIGN.md §15), or null. */
export function nextRestart(state: State): number | null {
  return state.restarting === undefined ? null : restarts.earliest(state.restarting, state.jobs);
}

/**
 * The earliest time a session must run by itself, or null: a pending job's timeout, (under a
 * policy) a running gang's runtime limit, a gang's guard against preemption running out, or a
 * restarting gang's backoff ending, when the leader must wake up to abort, stop, preempt or place.
 */
export function nextDeadline(state: State): number | null {
  return earlier(earlier(nextDue(state), nextGuardExpiry(state)), nextRestart(state));
}

/** The earliest pending job's timeout or running gang's runtime limit, or null: the deadlines a session's `dueBy` holds back. */
export function nextDue(state: State): number | null {
  return earlier(nextLimit(state), timeouts.earliest(state.pending, state.jobs));
}

// (asked at every turn: no array for three numbers)
function earlier(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/**
 * Whether a scheduling session could change anything: a fact that could change an outcome
 * arrived since the last session (state.epoch moved), a timeout or runtime limit is due (by
 * `dueBy` when it is earlier than `at`), a guard against preemption ran out, or a restarting
 * gang's backoff ended. An idle cluster needs no session, so it writes nothing.
 */
export function needsSession(state: State, at: number, dueBy: number = at): boolean {
  if (state.epoch > state.sessionEpoch) return true;
  const due = nextDue(state);
  const guard = nextGuardExpiry(state);
  const restart = nextRestart(state);
  return (due !== null && due <= Math.min(at, dueBy)) || (guard !== null && guard <= at) || (restart !== null && restart <= at);
}

/** Pending jobs whose timeout is due at `at`, by id. */
export function dueJobs(state: State, at: number): JobState[] {
  return timeouts.due(state.pending, state.jobs, at);
}
