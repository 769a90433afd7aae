import { copyOnWriteSteps } from '../copyOnWrite.ts';
import { runSteps } from '../steps.ts';
import type { Steps } from '../steps.ts';
import type { Writer } from '../copyOnWrite.ts';
import type { SchedulerEvent } from '../events.ts';
import { HostCounter } from '../placement/hostCounter.ts';
import type { HostIndex } from '../placement/hostIndex.ts';
import { HostIndexCache, releaseSessionIndex, sessionIndex } from '../placement/sessionIndex.ts';
import { addAllocation } from '../queues/queueUsage.ts';
import type { JobState, State } from '../state.ts';
import { SESSION_LIMITS, TransactionCutter } from '../turn/transactionCutter.ts';
import { attempt, doesNothing, servedUnchanged } from './attempt.ts';
import { Deadlines } from './deadlines.ts';
import { grow } from './elasticGrowth.ts';
import { chooseJobs } from './jobChoice.ts';
import type { JobChoice } from './jobChoice.ts';
import { JobQueue } from './jobQueue.ts';
import { leafWalks } from './leafWalk.ts';
import { PendingWalk } from './pendingWalk.ts';
import type { QueuedJob } from './jobQueue.ts';
import { RunningGangs } from './preemption.ts';
import { QueueLedger } from './queueLedger.ts';
import { QueueOrder } from './queueOrder.ts';
import { ReservationPlanner } from './reservationPlanner.ts';
import type { SessionOptions } from './sessionOptions.ts';
import { shareOf } from './sessionScope.ts';
import type { AttemptScope, SessionScope } from './sessionScope.ts';
import { startSession } from './sessionStart.ts';
import { emptyStats } from './sessionStats.ts';
import type { SessionStats } from './sessionStats.ts';
import { VictimCandidates } from './victimCandidates.ts';

/** A session's events, split into transactions, with its stats and the state after them. */
export interface SessionResult {
  parts: SchedulerEvent[][];
  stats: SessionStats;
  /**
   * The state after the parts, each applied as the transaction it will be (sequence, stamp, term,
   * then its events): equal to folding them, and frozen. The input state when there are none.
   */
  state: State;
}

/**
 * Runs one scheduling session on `state` at stamped time `at` (DESIGN.md §5), or nothing when no
 * session is needed. Pure: the same state and time give the same events.
 */
export function runSession(state: State, at: number, options: SessionOptions = {}): SessionResult {
  return runSteps(sessionSteps(state, at, options));
}

/** `runSession` in steps: it yields after every attempt (Steps); the same result. */
export function* sessionSteps(state: State, at: number, options: SessionOptions = {}): Steps<SessionResult> {
  const stats = emptyStats();
  const deadlines = options.deadlines ?? new Deadlines();
  if (!deadlines.needsSession(state, at, options.dueBy)) return { parts: [], stats, state };
  let parts: SchedulerEvent[][] = [];
  // The session applies every event it writes, once, with the same `apply` that folds the log, to
  // its own copy of the state (a copy-on-write run: the input is never written to), so later jobs
  // see earlier commits (DRF usage; placement reads the host index, which mirrors every debit),
  // and that copy, frozen, is the state after the session. Copy-on-write rather than an immer
  // draft: measured 4-8 times cheaper per event on this state.
  const after = yield* copyOnWriteSteps(state, function* (draft, w) {
    parts = yield* session(state, draft, w, at, options, stats, deadlines);
  });
  return { parts, stats, state: after };
}

// The session's ordered steps: (1, 2) deadlines, (3) the choice of jobs, then each job in order
// (a running elastic gang grows, a pending job is attempted); the transactions as cut.
function* session(base: State, draft: State, w: Writer, at: number, options: SessionOptions, stats: SessionStats, deadlines: Deadlines): Steps<SchedulerEvent[][]> {
  const cutter = options.cutter ?? new TransactionCutter(SESSION_LIMITS, { at, term: base.term });
  const scope: SessionScope = { base, draft, w, at, session: base.session + 1, dueBy: options.dueBy ?? at, options, stats, cutter };
  const start = startSession(scope, deadlines);
  // the order kept across sessions is walked passing over attempts that would do nothing, unless
  // a caller counts every attempt
  const order = options.indices === false || options.onAttempt !== undefined ? null : options.order ?? null;
  const choice = chooseJobs({ state: base, at, start, deadlines, pending: options.indices === false ? null : options.pending ?? null, order });
  stats.notRetried += choice.notRetried;
  if (choice.queued.length > 0 || (choice.ordered !== null && anyQueued(choice.ordered, at))) {
    const cache = options.hosts ?? new HostIndexCache();
    // the index is of the state as it is now: runtime limits may have freed hosts
    const hosts = sessionIndex(draft, cache, options.indices ?? true);
    const { index } = hosts;
    const { scope: attempts, queue, passed } = attemptScope(scope, hosts.index, new HostCounter(index, hosts.offline), choice);
    try {
      for (let job = queue.next(); job !== null; job = queue.next()) {
        if (job.status === 'running') grow(attempts, job);
        else attempt(attempts, job);
        yield;
      }
    } finally {
      stats.passedOver += passed();
      stats.nodeVisits = index.nodeVisits;
      stats.leafVisits = index.leafVisits;
      releaseSessionIndex(hosts, cache);
    }
  }
  return cutter.transactions;
}

// Whether the order holds a job to try now (a job waiting out a backoff is not queued).
function anyQueued(ordered: NonNullable<JobChoice['ordered']>, at: number): boolean {
  if (ordered.growing.length > 0) return true;
  for (const b of ordered.buckets) for (const run of b.runs.values()) if (run.jobs.some((e) => (e.job.notBefore ?? at) <= at)) return true;
  return false;
}

// The attempts' scope on the session's host index, the order of the chosen jobs and how many jobs
// that order passed over: by shares (JobQueue, or the order kept across sessions walked by
// PendingWalk), or with queues defined by their queues' use and rules too (QueueOrder, over
// JobQueues or over the walks of each leaf's part of the order kept).
function attemptScope(scope: SessionScope, index: HostIndex, counter: HostCounter, choice: JobChoice): { scope: AttemptScope; queue: { next(): JobState | null }; passed: () => number } {
  const { base, draft, at, stats } = scope;
  const policy = base.policy;
  const { running: timeline, plans } = scope.options;
  const kept = scope.options.indices === false || timeline === undefined || plans === undefined ? null : { timeline, plans, base };
  const planner = policy === undefined || policy.reserveDepth === 0 ? null : new ReservationPlanner(index, draft, policy, at, stats, kept);
  const ledger = base.queues === undefined ? null : new QueueLedger(draft, base.capacity, at);
  const resized = new Set<string>();
  const running = ledger === null ? null : new RunningGangs(draft, index, ledger, at, scope.session, resized);
  const attempts: AttemptScope = {
    ...scope,
    index,
    counter,
    planner,
    reservedAtStart: choice.reservedAtStart,
    unsatisfiable: new Map(),
    heldBack: new Map(),
    selectClasses: new Map(),
    emptyFits: new Map(),
    shares: { user: new Map(), queue: new Map() },
    ledger,
    running,
    candidates: running === null ? null : new VictimCandidates(ledger!, running),
    order: null,
    noVictims: new Set(),
    resized,
    free: { cpu: 0, memoryMb: 0, gpus: 0 },
  };
  const share = (kind: 'user' | 'queue', name: string): number => shareOf(attempts, kind, name);
  const records = (queue: { next(): QueuedJob | null }) => ({ next: (): JobState | null => { const next = queue.next(); return next === null ? null : choice.records.get(next.id)!; } });
  if (ledger === null) {
    if (choice.ordered === null) return { scope: attempts, queue: records(new JobQueue(choice.queued, share)), passed: () => 0 };
    const { buckets, growing } = choice.ordered;
    const walk = new PendingWalk(buckets, growing, at, share, (run) => servedUnchanged(attempts, run.cacheKey!, run.recorded!));
    return { scope: attempts, queue: walk, passed: () => walk.passed };
  }
  for (let h = 0; h < index.ids.length; h++) addAllocation(attempts.free, { cpu: index.freeCpu[h]!, memoryMb: index.freeMem[h]!, gpus: index.freeGpu[h]! });
  if (choice.ordered === null) {
    const order = QueueOrder.of(choice.queued, ledger, share, (job) => ledger.leafOf(choice.records.get(job.id)!.spec));
    attempts.order = order;
    return { scope: attempts, queue: records(order), passed: () => 0 };
  }
  const walks = leafWalks(choice.ordered.buckets, choice.ordered.growing, ledger, at, share, (job) => doesNothing(attempts, job));
  const order = new QueueOrder(walks, ledger);
  attempts.order = order;
  return { scope: attempts, queue: order, passed: () => [...walks.values()].reduce((n, w) => n + w.passed, 0) };
}
