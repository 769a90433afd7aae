import type { JobState, State } from '../state.ts';
import { JobDeadlines } from './jobDeadlines.ts';
import { limitOf } from './runtimeLimits.ts';

/** A pending job's timeout deadline (pendingSince + timeoutMs), or null without a timeout. */
export function deadlineOf(job: JobState): number | null {
  return job.spec.timeoutMs === undefined ? null : job.pendingSince + job.spec.timeoutMs;
}

/**
 * The deadlines a driver's turns ask about (pending jobs' timeouts, running gangs' runtime limits,
 * guards against preemption, restarts' backoffs), each memoised over the state's tables while
 * they share their parts (`JobDeadlines`). Kept by a turn context (`TurnContext.deadlines`), never
 * in a module; a fresh one reads every table whole.
 */
export class Deadlines {
  // pending jobs' timeouts
  private readonly timeouts = new JobDeadlines(deadlineOf);
  // running gangs' runtime limits, over the table of limited gangs
  private readonly limits = new JobDeadlines(limitOf);
  // running gangs' commits, over the table of gangs within their minimum runtime before preemption
  private readonly guards = new JobDeadlines((job) => job.committedAt ?? null);
  // restarting gangs' backoffs (contract v1.2), over the table of jobs waiting one out
  private readonly restarts = new JobDeadlines((job) => job.notBefore ?? null);

  /**
   * When the first guarded gang may become a victim of preemption (DESIGN.md §12), or null: its
   * commit plus the policy's `minRuntimeBeforePreemptionMs`.
   */
  nextGuardExpiry(state: State): number | null {
    if (state.guarded === undefined) return null;
    const first = this.guards.earliest(state.guarded, state.jobs);
    return first === null ? null : first + (state.policy?.minRuntimeBeforePreemptionMs ?? 0);
  }

  /** When the first gang waiting out a restart's backoff may be placed again (DESIGN.md §15), or null. */
  nextRestart(state: State): number | null {
    return state.restarting === undefined ? null : this.restarts.earliest(state.restarting, state.jobs);
  }

  /** The earliest runtime limit of a running gang, or null (none, or no policy in force). */
  nextLimit(state: State): number | null {
    if (state.policy === undefined || state.limited === undefined) return null;
    return this.limits.earliest(state.limited, state.jobs);
  }

  /** The earliest pending job's timeout or running gang's runtime limit, or null: the deadlines a session's `dueBy` holds back. */
  nextDue(state: State): number | null {
    return earlier(this.nextLimit(state), this.timeouts.earliest(state.pending, state.jobs));
  }

  /**
   * The earliest time a session must run by itself, or null: a pending job's timeout, (under a
   * policy) a running gang's runtime limit, a gang's guard against preemption running out, or a
   * restarting gang's backoff ending, when the leader must wake up to abort, stop, preempt or place.
   */
  next(state: State): number | null {
    return earlier(earlier(this.nextDue(state), this.nextGuardExpiry(state)), this.nextRestart(state));
  }

  /**
   * Whether a scheduling session could change anything: a fact that could change an outcome
   * arrived since the last session (state.epoch moved), a timeout or runtime limit is due (by
   * `dueBy` when it is earlier than `at`), a guard against preemption ran out, or a restarting
   * gang's backoff ended. An idle cluster needs no session, so it writes nothing.
   */
  needsSession(state: State, at: number, dueBy: number = at): boolean {
    if (state.epoch > state.sessionEpoch) return true;
    const due = this.nextDue(state);
    const guard = this.nextGuardExpiry(state);
    const restart = this.nextRestart(state);
    return (due !== null && due <= Math.min(at, dueBy)) || (guard !== null && guard <= at) || (restart !== null && restart <= at);
  }

  /** Pending jobs whose timeout is due at `at`, by id. */
  dueJobs(state: State, at: number): JobState[] {
    return this.timeouts.due(state.pending, state.jobs, at);
  }

  /** Running gangs whose runtime limit is due at `at`, by id (none without a policy). */
  dueLimits(state: State, at: number): JobState[] {
    if (state.policy === undefined || state.limited === undefined) return [];
    return this.limits.due(state.limited, state.jobs, at);
  }
}

// (asked at every turn: no array for three numbers)
function earlier(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** `Deadlines.next` read afresh (every table whole): for a caller with no turn context; a driver asks its context's. */
export function nextDeadline(state: State): number | null {
  return new Deadlines().next(state);
}

/** `Deadlines.needsSession` read afresh (every table whole): for a caller with no turn context; a driver asks its context's. */
export function needsSession(state: State, at: number, dueBy: number = at): boolean {
  return new Deadlines().needsSession(state, at, dueBy);
}
