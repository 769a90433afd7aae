import type { AbortReason } from '../events.ts';
import { releaseAll, reservationCleared } from '../lifecycle.ts';
import { deadlineOf } from './deadlines.ts';
import type { Deadlines } from './deadlines.ts';
import { limitOf } from './runtimeLimits.ts';
import { emit } from './sessionScope.ts';
import type { SessionScope } from './sessionScope.ts';

/** What a session's deadlines did before any job is tried. */
export interface SessionStart {
  /** Jobs aborted at their deadline (they leave the queue). */
  timedOut: Set<string>;
  /** Running gangs stopped at their runtime limit (what they held is free for this session). */
  stopped: Set<string>;
  /** Whether a timed-out job was reserved: a place among the reserved is free, which every blocked job may take. */
  reservationFreed: boolean;
}

/**
 * Opens a session: writes `SessionStarted`, then (1) the timeouts due, then (2) the runtime limits
 * due, each up to `dueBy` (those after it held back, and `dueBy` written only when one is).
 */
export function startSession(scope: SessionScope, deadlines: Deadlines): SessionStart {
  const { base, at, session, dueBy, stats } = scope;
  const dueTimeouts = deadlines.dueJobs(base, at);
  const dueStops = deadlines.dueLimits(base, at);
  const timeouts = dueTimeouts.filter((job) => (deadlineOf(job) as number) <= dueBy);
  const stops = dueStops.filter((job) => (limitOf(job) as number) <= dueBy);
  const held = timeouts.length < dueTimeouts.length || stops.length < dueStops.length;
  emit(scope, [held ? { type: 'SessionStarted', session, at, dueBy } : { type: 'SessionStarted', session, at }]);

  // 1. timeouts first: a job past its deadline leaves the queue before anything is placed
  const timedOut = new Set<string>();
  // a reserved job that leaves frees a place among the reserved: every blocked job may take it
  let reservationFreed = false;
  for (const job of timeouts) {
    if (job.reservation !== undefined) reservationFreed = true;
    timedOut.add(job.spec.id);
    stats.timedOut++;
    const reason: AbortReason = {
      category: 'timeout',
      message: `job ${job.spec.id} was not placed within ${job.spec.timeoutMs} ms of becoming pending at ${job.pendingSince}`,
      hosts: {},
    };
    emit(scope, [...reservationCleared(job, session, 'timeout'), { type: 'GangAborted', jobId: job.spec.id, session, at, final: true, reason }]);
  }

  // 2. runtime limits (contract v1.1): a gang past its limit is stopped, whole, and leaves the
  // queue; what it held is free for this session
  const stopped = new Set<string>();
  for (const job of stops) {
    stopped.add(job.spec.id);
    stats.limitsStopped++;
    const reason: AbortReason = {
      category: 'runtime-limit',
      message: `job ${job.spec.id} ran for its runtime limit of ${job.spec.runtimeLimitMs} ms from ${job.committedAt}`,
      hosts: {},
    };
    emit(scope, [...releaseAll(job, 'runtime-limit'), { type: 'GangAborted', jobId: job.spec.id, session, at, final: true, reason }]);
  }
  return { timedOut, stopped, reservationFreed };
}
