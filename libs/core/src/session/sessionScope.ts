import type { Writer } from '../copyOnWrite.ts';
import type { AbortCategory, AbortReason, SchedulerEvent } from '../events.ts';
import { apply } from '../evolve.ts';
import type { HostCounter } from '../placement/hostCounter.ts';
import type { HostClass } from '../placement/hostClass.ts';
import type { HostIndex } from '../placement/hostIndex.ts';
import type { State } from '../state.ts';
import type { TransactionCutter } from '../turn/transactionCutter.ts';
import type { VictimCandidates } from './victimCandidates.ts';
import { dominantShare } from './dominantShare.ts';
import type { RunningGangs } from './preemption.ts';
import type { QueueLedger } from './queueLedger.ts';
import type { QueueOrder } from './queueOrder.ts';
import type { ReservationPlanner } from './reservationPlanner.ts';
import type { AttemptOutcome, SessionOptions } from './sessionOptions.ts';
import type { SessionStats } from './sessionStats.ts';

/** What every step of a session reads and writes through: the state it began on, its draft, its stamp, its stats and its cutter. */
export interface SessionScope {
  /** The state the session began on (never written). */
  readonly base: State;
  /** The session's copy-on-write draft: every event written is applied to it at once. */
  readonly draft: State;
  readonly w: Writer;
  readonly at: number;
  /** The session's number. */
  readonly session: number;
  /** Timeouts and runtime limits fall due up to this (the stamp, or earlier: SessionStarted.dueBy when that held one back). */
  readonly dueBy: number;
  readonly options: SessionOptions;
  readonly stats: SessionStats;
  readonly cutter: TransactionCutter;
}

/** An entry of the session-local unsatisfiable cache: the category found, and the job that found it. */
export interface CacheEntry {
  category: AbortCategory;
  jobId: string;
}

/**
 * What the attempts of a session share once it has jobs to try: its host index and planners, and
 * what it learnt so far (all session-local: never part of the state, which stays exactly the fold
 * of the log).
 */
export interface AttemptScope extends SessionScope {
  readonly index: HostIndex;
  readonly counter: HostCounter;
  /** Reservations (null: the policy has them off, or there is no policy). */
  readonly planner: ReservationPlanner | null;
  /** Pending jobs reserved when the session began (a job held back waits behind them). */
  readonly reservedAtStart: number;
  /** The unsatisfiable cache as this session has filled it, failures that wrote nothing included. */
  readonly unsatisfiable: Map<string, CacheEntry>;
  /**
   * Requests held back by a reservation this session, by request key, with the earliest planned
   * end held back: an identical one later in the session that would run as long or longer has no
   * more room, no fewer reservations and overlaps at least as many of them, so it cannot commit either.
   */
  readonly heldBack: Map<string, { end: number; reason: AbortReason }>;
  /** The host classes each select matches, by select. */
  readonly selectClasses: Map<string, HostClass[]>;
  /** Whether a request fits the cluster with every host empty, by fingerprint. */
  readonly emptyFits: Map<string, boolean>;
  /** Dominant shares read this session, dropped when a commit or stop changes them. */
  readonly shares: { user: Map<string, number>; queue: Map<string, number> };
  /** With queues defined (DESIGN.md §12): their use and rules (null otherwise). */
  readonly ledger: QueueLedger | null;
  /** With queues defined: the gangs preemption may stop, and the lists of candidates its preemptors read. */
  readonly running: RunningGangs | null;
  readonly candidates: VictimCandidates | null;
  /** With queues defined: the order of the jobs still to try (rekeyed after a preemption). */
  order: QueueOrder<unknown> | null;
  /** Requests whose preemption found no victim set this session (fingerprint, leaf, priority). */
  readonly noVictims: Set<string>;
  /** Gangs grown, shrunk or stopped by preemption this session: neither grown nor victims before the next. */
  readonly resized: Set<string>;
  /** Free CPU, memory and GPUs over the up hosts (kept with commits and preemptions: a bound for preemption). */
  readonly free: { cpu: number; memoryMb: number; gpus: number };
}

/**
 * Writes one gang's events: one unit, which the cutter keeps in one transaction (opening it on the
 * draft first when it starts one); then they are applied.
 */
export function emit(scope: SessionScope, unit: readonly SchedulerEvent[]): void {
  scope.cutter.add(scope.draft, unit);
  for (const event of unit) apply(scope.draft, event, scope.w);
  scope.stats.events += unit.length;
}

/** Reports how an attempt ended to the session's caller (`SessionOptions.onAttempt`). */
export function report(scope: SessionScope, jobId: string, members: number, outcome: AttemptOutcome, wrote: boolean): void {
  scope.options.onAttempt?.({ jobId, members, outcome, wrote });
}

/** A user's or a queue's dominant share as the draft holds it now (read once until a change drops it). */
export function shareOf(scope: AttemptScope, kind: 'user' | 'queue', name: string): number {
  const known = scope.shares[kind];
  let share = known.get(name);
  if (share === undefined) {
    const usage = kind === 'user' ? scope.draft.usage.users[name] : scope.draft.usage.queues[name];
    share = dominantShare(usage, scope.base.capacity);
    known.set(name, share);
  }
  return share;
}

/** Drops the shares of a job's user and queue: its usage changed. */
export function forgetShares(scope: AttemptScope, identity: { user: string; queue: string }): void {
  scope.shares.user.delete(identity.user);
  scope.shares.queue.delete(identity.queue);
}
