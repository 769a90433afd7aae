import type { HostIndexCache } from '../placement/sessionIndex.ts';
import type { TransactionCutter } from '../turn/transactionCutter.ts';
import type { Deadlines } from './deadlines.ts';
import type { KeptPlans } from './keptPlans.ts';
import type { PendingLeaves } from './pendingLeaves.ts';
import type { PendingOrder } from './pendingOrder.ts';
import type { RunningTimeline } from './runningTimeline.ts';

/** How one attempt ended: placed, not placed, or pended from the unsatisfiable cache. */
export type AttemptOutcome = 'committed' | 'failed' | 'cached';

/** Reported after each attempt (for the benchmark's timings; the core itself keeps no clock). */
export interface AttemptInfo {
  jobId: string;
  members: number;
  outcome: AttemptOutcome;
  /** Whether the attempt wrote events (a commit, or a pend reason that changed). */
  wrote: boolean;
}

/** Options of one session run. */
export interface SessionOptions {
  /** Called after every attempt, in order. */
  onAttempt?: (info: AttemptInfo) => void;
  /** What cuts the session's gangs into transactions and opens them (a turn's, stamped with its term; default: one under SESSION_LIMITS, stamped with the state's term). */
  cutter?: TransactionCutter;
  /** The host index kept from the last session (a turn context's); without it, a fresh index. */
  hosts?: HostIndexCache;
  /** Timeouts and runtime limits fall due up to this time when it is earlier than `at` (written in `SessionStarted`). */
  dueBy?: number;
  /** Whether the session uses its indices (default true; `TurnContextOptions.indices`): the same decisions either way. */
  indices?: boolean;
  /** The pending table by leaf as earlier sessions read it (a turn context's). */
  pending?: PendingLeaves;
  /** The pending jobs in order as earlier sessions read them (a turn context's). */
  order?: PendingOrder;
  /** The running gangs' timeline as earlier sessions' reservation plans read it (a turn context's). */
  running?: RunningTimeline;
  /** Reservation plans of earlier sessions with their inputs (a turn context's); used with `running`. */
  plans?: KeptPlans;
  /** The deadlines as earlier turns read them (a turn context's); without it, every table is read whole. */
  deadlines?: Deadlines;
}
