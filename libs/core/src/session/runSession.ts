import { copyOnWriteSteps } from '../copyOnWrite.ts';
import { runSteps } from '../steps.ts';
import type { Steps } from '../steps.ts';
import type { Writer } from '../copyOnWrite.ts';
import type { JobRequest } from '../contract/types.ts';
import type { AbortCategory, AbortReason, Allocation, AllocationResources, GangAborted, GangCommitted, GangReserved, GangResized, MemberBound, Rendezvous, ReservationCleared, SchedulerEvent } from '../events.ts';
import { activeRequest, heldMembers, isElastic, jobRequests, requestFingerprint, requestSelectAst } from '../jobRequests.ts';
import { releaseAll, reservationCleared } from '../lifecycle.ts';
import { apply } from '../evolve.ts';
import { allocateGang } from '../placement/allocateGang.ts';
import type { AllocatorCounters, Avoid } from '../placement/allocateGang.ts';
import { fitsEmptyCluster } from '../placement/fitsEmptyCluster.ts';
import { gangShape } from '../placement/gangShape.ts';
import type { GangShape } from '../placement/gangShape.ts';
import { HostCounter } from '../placement/hostCounter.ts';
import type { HostClass, HostIndex } from '../placement/hostIndex.ts';
import { HostIndexCache, releaseSessionIndex, sessionIndex } from '../placement/sessionIndex.ts';
import type { Statement } from '../placement/statement.ts';
import { topologyRoom } from '../placement/topologyDomains.ts';
import { evalSelect } from '../select/index.ts';
import type { SelectAst } from '../select/index.ts';
import { leafGet, shardGet, shardLeaf, shardLeaves } from '../shard.ts';
import type { JobState, State } from '../state.ts';
import { deadlineOf, dueJobs, needsSession, nextGuardExpiry } from './deadlines.ts';
import { QueueLedger, gangRequest } from './queueLedger.ts';
import { addAllocation } from '../queues/queueUsage.ts';
import type { QuotaIssue } from './queueLedger.ts';
import { QueueOrder } from './queueOrder.ts';
import { ReclaimOrder, RunningGangs, chooseVictims, restoreVictims } from './preemption.ts';
import { rendezvousAt } from './rendezvousAt.ts';
import type { Preemptor, VictimKind, Victims } from './preemption.ts';
import { ReservationPlanner } from './reservationPlanner.ts';
import type { PlannedReservation } from './reservationPlanner.ts';
import { dueLimits, limitOf, plannedRuntime } from './runtimeLimits.ts';
import { dominantShare } from './dominantShare.ts';
import { JobQueue } from './jobQueue.ts';
import type { PendingLeaves } from './pendingLeaves.ts';
import { countsDemand, fullCounts, heldCounts, largestFit, minCounts, partShape, resizedAllocations } from './elasticGangs.ts';
import type { QueuedJob } from './jobQueue.ts';
import { SESSION_LIMITS, TransactionCutter } from '../turn/transactionCutter.ts';

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
}

/** What a session did, for tests and the benchmark (not written anywhere). */
export interface SessionStats extends AllocatorCounters {
  /** Jobs whose deadline was due (aborted with final: true). */
  timedOut: number;
  /** Running gangs stopped at their runtime limit. */
  limitsStopped: number;
  /** Blocked jobs given a reservation. */
  reserved: number;
  /** Attempts that would have fitted but for a reservation (category `reserved`). */
  backfillRefused: number;
  /** Attempts refused by a queue's max (category `quota`). */
  quotaRefused: number;
  /** Commits that stopped running gangs (DESIGN.md §12), and the gangs they stopped. */
  preemptions: number;
  preempted: number;
  /** Elastic gangs grown, and shrunk by preemption instead of being stopped (DESIGN.md §13). */
  grown: number;
  shrunk: number;
  /** Pending jobs tried this session. */
  attempted: number;
  /** Pending jobs not tried: nothing they could use changed since their last attempt. */
  notRetried: number;
  /** Attempts that ran the allocator. */
  allocatorRuns: number;
  /** Attempts pended from the unsatisfiable cache without running the allocator. */
  cacheHits: number;
  committed: number;
  failed: number;
  /** Failed attempts that wrote a GangAborted (the pend reason's category changed). */
  abortsWritten: number;
  membersPlaced: number;
  events: number;
  /** Host-index tree nodes and leaves opened by host searches. */
  nodeVisits: number;
  leafVisits: number;
}

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

function emptyStats(): SessionStats {
  // written out: a spread into a literal this size is several times slower to build
  return {
    plansTried: 0, plansSkipped: 0, hostSearches: 0, timedOut: 0, limitsStopped: 0, reserved: 0, backfillRefused: 0, quotaRefused: 0, preemptions: 0, preempted: 0, grown: 0, shrunk: 0, attempted: 0, notRetried: 0, allocatorRuns: 0, cacheHits: 0, committed: 0,
    failed: 0, abortsWritten: 0, membersPlaced: 0, events: 0, nodeVisits: 0, leafVisits: 0,
  };
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
  if (!needsSession(state, at, options.dueBy)) return { parts: [], stats, state };
  let parts: SchedulerEvent[][] = [];
  // The session applies every event it writes, once, with the same `apply` that folds the log, to
  // its own copy of the state (a copy-on-write run: the input is never written to), so later jobs
  // see earlier commits (DRF usage; placement reads the host index, which mirrors every debit),
  // and that copy, frozen, is the state after the session. Copy-on-write rather than an immer
  // draft: measured 4-8 times cheaper per event on this state.
  const after = yield* copyOnWriteSteps(state, function* (draft, w) {
    parts = yield* new Session(state, draft, w, at, options, stats).run();
  });
  return { parts, stats, state: after };
}

interface CacheEntry {
  category: AbortCategory;
  jobId: string;
}

class Session {
  private readonly session: number;
  // timeouts and runtime limits fall due up to this (the stamp, or earlier: SessionStarted.dueBy when that held one back)
  private readonly dueBy: number;
  private readonly cutter: TransactionCutter;
  private index!: HostIndex;
  private counter!: HostCounter;
  private planner: ReservationPlanner | null = null;
  // pending jobs reserved when the session began (a job held back waits behind them)
  private reservedAtStart = 0;
  // session-local: the unsatisfiable cache as this session has filled it, failures that wrote
  // nothing included; never part of the state, which stays exactly the fold of the log
  private readonly unsatisfiable = new Map<string, CacheEntry>();
  // requests held back by a reservation this session, by request key, with the earliest planned end
  // held back: an identical one later in the session that would run as long or longer has no more
  // room, no fewer reservations and overlaps at least as many of them, so it cannot commit either
  private readonly heldBack = new Map<string, { end: number; reason: AbortReason }>();
  private readonly selectClasses = new Map<string, HostClass[]>();
  private readonly emptyFits = new Map<string, boolean>();
  private readonly shares = { user: new Map<string, number>(), queue: new Map<string, number>() };
  // with queues defined (DESIGN.md §12): their use and rules, the gangs preemption may stop, and
  // the requests whose preemption found no victim set this session (fingerprint, leaf, priority)
  private ledger: QueueLedger | null = null;
  private running: RunningGangs | null = null;
  private reclaim: ReclaimOrder | null = null;
  private order: QueueOrder | null = null;
  private readonly noVictims = new Set<string>();
  // gangs grown, shrunk or stopped by preemption this session: neither grown nor victims before the next
  private readonly resized = new Set<string>();
  // free CPU, memory and GPUs over the up hosts (kept with commits and preemptions: a bound for preemption)
  private readonly free = { cpu: 0, memoryMb: 0, gpus: 0 };

  constructor(
    private readonly base: State,
    private readonly draft: State,
    private readonly w: Writer,
    private readonly at: number,
    private readonly options: SessionOptions,
    private readonly stats: SessionStats,
  ) {
    this.session = base.session + 1;
    this.dueBy = options.dueBy ?? at;
    this.cutter = options.cutter ?? new TransactionCutter(SESSION_LIMITS, { at, term: base.term });
  }

  *run(): Steps<SchedulerEvent[][]> {
    const base = this.base;
    const prevSessionEpoch = base.sessionEpoch;
    // deadlines due at the stamp, those after `dueBy` held back (written only when one is)
    const dueTimeouts = dueJobs(base, this.at);
    const dueStops = dueLimits(base, this.at);
    const timeouts = dueTimeouts.filter((job) => (deadlineOf(job) as number) <= this.dueBy);
    const stops = dueStops.filter((job) => (limitOf(job) as number) <= this.dueBy);
    const held = timeouts.length < dueTimeouts.length || stops.length < dueStops.length;
    this.emit([held ? { type: 'SessionStarted', session: this.session, at: this.at, dueBy: this.dueBy } : { type: 'SessionStarted', session: this.session, at: this.at }]);

    // 1. timeouts first: a job past its deadline leaves the queue before anything is placed
    const timedOut = new Set<string>();
    // a reserved job that leaves frees a place among the reserved: every blocked job may take it
    let reservationFreed = false;
    for (const job of timeouts) {
      if (job.reservation !== undefined) reservationFreed = true;
      timedOut.add(job.spec.id);
      this.stats.timedOut++;
      const reason: AbortReason = {
        category: 'timeout',
        message: `job ${job.spec.id} was not placed within ${job.spec.timeoutMs} ms of becoming pending at ${job.pendingSince}`,
        hosts: {},
      };
      this.emit([...reservationCleared(job, this.session, 'timeout'), { type: 'GangAborted', jobId: job.spec.id, session: this.session, at: this.at, final: true, reason }]);
    }

    // 2. runtime limits (contract v1.1): a gang past its limit is stopped, whole, and leaves the
    // queue; what it held is free for this session
    const stopped = new Set<string>();
    for (const job of stops) {
      stopped.add(job.spec.id);
      this.stats.limitsStopped++;
      const reason: AbortReason = {
        category: 'runtime-limit',
        message: `job ${job.spec.id} ran for its runtime limit of ${job.spec.runtimeLimitMs} ms from ${job.committedAt}`,
        hosts: {},
      };
      this.emit([...releaseAll(job, 'runtime-limit'), { type: 'GangAborted', jobId: job.spec.id, session: this.session, at: this.at, final: true, reason }]);
    }

    // 3. which pending jobs to try (Nomad's blocked evaluations): those pending since the last
    // session, or all of them when capacity could have grown since (a release, a node joining, a
    // runtime limit just now, a new policy); under a policy also every reserved job and every job
    // held back by a reservation, since the reservations of this session are planned anew
    // (a gang whose guard against preemption ran out may now be stopped for a job that waits)
    const guardExpired = (nextGuardExpiry(base) ?? Number.POSITIVE_INFINITY) <= this.at;
    const retryAll = base.freeEpoch > prevSessionEpoch || this.stats.limitsStopped > 0 || reservationFreed || guardExpired;
    const policy = base.policy;
    const queued: QueuedJob[] = [];
    // a job is tried at most once per session, so its record is still the base state's
    const records = new Map<string, JobState>();
    const queue = (job: JobState): void => {
      records.set(job.spec.id, job);
      queued.push({ id: job.spec.id, priority: job.spec.priority, user: job.spec.identity.user, queue: job.spec.identity.queue, submitIndex: job.submitIndex });
    };
    // leaves whose jobs were read by an earlier session and have not changed since hold no job new
    // since the last session: only their planned jobs are tried (none when capacity could have grown: all are)
    const leaves = this.options.indices === false || timedOut.size > 0 ? null : this.options.pending ?? null;
    for (const [shard, pending] of shardLeaves(base.pending)) {
      const jobs = shardLeaf(base.jobs, shard);
      const known = retryAll || leaves === null || jobs === null || jobs === undefined ? undefined : leaves.get(pending, jobs, policy !== undefined);
      // (no job of it may be new since the last session: a record made before that session was applied is not used)
      if (known !== undefined && known.newest <= prevSessionEpoch) {
        this.reservedAtStart += known.reserved;
        this.stats.notRetried += known.unplanned;
        for (const id of known.planned) {
          const job = leafGet(jobs, id)!;
          if (job.notBefore === undefined || job.notBefore <= this.at) queue(job);
        }
        continue;
      }
      const learnt = { jobs: jobs as object, policy: policy !== undefined, planned: [] as string[], unplanned: 0, newest: -1, reserved: 0 };
      for (const id of pending) {
        const job = leafGet(jobs, id);
        if (job === undefined || timedOut.has(id) || job.status !== 'pending') continue;
        if (job.reservation !== undefined) learnt.reserved++;
        // a gang restarting after a member's failure (contract v1.2) is planned: every session
        // looks at it, and the one at or after its backoff's end tries it (it is then news, like a
        // job just pending)
        const planned = job.notBefore !== undefined || (policy !== undefined && (job.reservation !== undefined || job.pendReason?.category === 'reserved'));
        if (planned) learnt.planned.push(id);
        else {
          learnt.unplanned++;
          learnt.newest = Math.max(learnt.newest, job.pendingEpoch);
        }
        if (job.notBefore !== undefined && job.notBefore > this.at) continue;
        if (!retryAll && !planned && job.pendingEpoch <= prevSessionEpoch) {
          this.stats.notRetried++;
          continue;
        }
        queue(job);
      }
      this.reservedAtStart += learnt.reserved;
      if (leaves !== null && jobs !== null && jobs !== undefined) leaves.set(pending, learnt);
    }
    // running elastic gangs below their full size take their turn to grow (DESIGN.md §13) when
    // capacity could have grown since the last session, in the order of the pending jobs
    if (retryAll && base.elastic !== undefined) {
      for (const [shard, ids] of shardLeaves(base.elastic)) {
        const jobs = shardLeaf(base.jobs, shard);
        for (const id of ids) {
          const job = leafGet(jobs, id);
          if (job === undefined || job.status !== 'running' || stopped.has(id)) continue;
          records.set(id, job);
          queued.push({ id, priority: job.spec.priority, user: job.spec.identity.user, queue: job.spec.identity.queue, submitIndex: job.submitIndex });
        }
      }
    }
    if (queued.length > 0) {
      const cache = this.options.hosts ?? new HostIndexCache();
      // the index is of the state as it is now: runtime limits may have freed hosts
      const hosts = sessionIndex(this.draft, cache, this.options.indices ?? true);
      const { index, offline } = hosts;
      this.index = index;
      this.counter = new HostCounter(index, offline);
      this.planner = policy === undefined || policy.reserveDepth === 0 ? null : new ReservationPlanner(index, this.draft, policy, this.at, this.stats);
      const share = (kind: 'user' | 'queue', name: string): number => this.shareOf(kind, name);
      let queue: { next(): QueuedJob | null };
      if (base.queues === undefined) queue = new JobQueue(queued, share);
      else {
        const ledger = new QueueLedger(this.draft, base.capacity, this.at);
        this.ledger = ledger;
        this.running = new RunningGangs(this.draft, index, ledger, this.at, this.session, this.resized);
        this.reclaim = new ReclaimOrder(ledger, this.running);
        for (let h = 0; h < index.ids.length; h++) addAllocation(this.free, { cpu: index.freeCpu[h]!, memoryMb: index.freeMem[h]!, gpus: index.freeGpu[h]! });
        const order = new QueueOrder(queued, ledger, share, (job) => ledger.leafOf(records.get(job.id)!.spec));
        this.order = order;
        queue = order;
      }
      try {
        for (let next = queue.next(); next !== null; next = queue.next()) {
          this.attempt(records.get(next.id)!);
          yield;
        }
      } finally {
        this.stats.nodeVisits = index.nodeVisits;
        this.stats.leafVisits = index.leafVisits;
        releaseSessionIndex(hosts, cache);
      }
    }
    return this.cutter.transactions;
  }

  private shareOf(kind: 'user' | 'queue', name: string): number {
    const known = this.shares[kind];
    let share = known.get(name);
    if (share === undefined) {
      const usage = kind === 'user' ? this.draft.usage.users[name] : this.draft.usage.queues[name];
      share = dominantShare(usage, this.base.capacity);
      known.set(name, share);
    }
    return share;
  }

  private attempt(job: JobState): void {
    if (job.status === 'running') {
      this.grow(job);
      return;
    }
    this.stats.attempted++;
    const variants = this.variantsOf(job);
    const leaf = this.ledger?.leafOf(job.spec) ?? '';
    // the variants in order, without stopping anyone: the first that fits commits (DESIGN.md §13)
    const misses: Miss[] = [];
    for (const variant of variants) {
      const miss = this.tryVariant(job, variant, leaf);
      if (miss === null) return;
      misses.push(miss);
    }
    // then a blocked job that may preempt does so, over the variants in order, rather than wait or
    // reserve (DESIGN.md §11, §12): above a queue's max only stopping gangs of its own queues can
    // make room; short of resources, a reclaim or a lower priority may
    if (this.ledger !== null) {
      for (const [i, variant] of variants.entries()) {
        const category = misses[i]!.category;
        if ((category === 'quota' || category === 'insufficient-resources') && this.preempt(job, variant, leaf)) return;
      }
    }
    this.fail(job, variants, misses);
  }

  /** The requests an attempt tries, in order: the job's own, or each of its alternatives. */
  private variantsOf(job: JobState): Variant[] {
    const requests = jobRequests(job.spec);
    const alternatives = job.spec.alternatives !== undefined;
    return requests.map((request, i) => {
      // an elastic request must fit at its minimum (DESIGN.md §13): that is what an attempt tries first
      const elastic = isElastic(request);
      return {
        alternative: alternatives ? i : undefined,
        request,
        shape: elastic ? partShape(request, minCounts(request)) : gangShape(request),
        demand: this.ledger === null ? null : elastic ? countsDemand(request, minCounts(request)) : gangRequest(request),
        fingerprint: requestFingerprint(job, i),
        ast: requestSelectAst(job, i),
      };
    });
  }

  /** Tries one request of a job: null when it committed, otherwise how it missed (nothing of it is left held). */
  private tryVariant(job: JobState, variant: Variant, leaf: string): Miss | null {
    const stats = this.stats;
    const id = job.spec.id;
    const { shape } = variant;
    const ledger = this.ledger;
    if (ledger !== null) {
      const quota = ledger.quotaIssue(leaf, variant.demand!);
      // above a queue's max (never cached: it depends on the queue, not on the request)
      if (quota !== null) return { category: 'quota', cached: false, classes: null, reason: () => quotaReason(quota) };
    }
    const cacheKey = cacheKeyOf(job, variant.fingerprint);
    const hit = this.unsatisfiable.get(cacheKey);
    if (hit !== undefined) {
      // an identical request already exhausted every plan this session: no allocator for it
      const reason: AbortReason = {
        category: hit.category,
        message: `an identical request (job ${hit.jobId}, same user, queue and project) found ${hit.category} earlier in this session`,
        hosts: {},
        cached: true,
      };
      return { category: hit.category, cached: true, cachedBy: hit.jobId, classes: null, reason: () => reason };
    }
    const planner = this.planner;
    const runtime = planner === null ? 0 : plannedRuntime(job, this.base.policy!);
    const end = this.at + runtime;
    const held = this.heldBack.get(cacheKey);
    if (held !== undefined && end >= held.end) return { category: 'reserved', cached: true, classes: null, reason: () => held.reason };
    const classes = this.classesFor(variant);
    if (classes.length > 0) stats.allocatorRuns++;
    // backfill: placed now only where it delays no reservation made earlier in this session. The
    // placement as it would be without reservations stands when it delays none; otherwise the
    // search runs again passing over the hosts where it would. (A job that does not fit at all
    // does not fit with less either: one search decides it.)
    const { stmt, delaying } = classes.length > 0 ? this.placeNow(id, shape, classes, end) : { stmt: null, delaying: null };
    if (stmt === null && delaying !== null) {
      // it fits, but only by delaying a reservation: it waits (cached for identical requests that run as long or longer)
      const delayed = planner!.delayed(end, delaying)!;
      const reason: AbortReason = {
        category: 'reserved',
        message: `would delay job ${delayed.jobId}, reserved to start at ${delayed.startAt} on ${delayed.hosts.join(', ')}; it fits now only until then (expected to run ${runtime === Number.POSITIVE_INFINITY ? 'until closed' : `${runtime} ms`})`,
        hosts: {},
        by: delayed.jobId,
      };
      if (held === undefined || end < held.end) this.heldBack.set(cacheKey, { end, reason: { ...reason, message: `an identical request (job ${id}, same user, queue and project, expected to run no longer) ${reason.message}`, cached: true } });
      return { category: 'reserved', cached: false, classes, reason: () => reason };
    }
    if (stmt !== null) {
      const excluded = new Set<number>();
      const enlarged = (s: Statement): Placed => (isElastic(variant.request) ? this.enlarge(job, variant, s, leaf, (part) => this.placeNow(id, part, classes, end, excluded).stmt) : { stmt: s, shape, demand: variant.demand });
      let placed = enlarged(stmt);
      let meet = this.rendezvousOf(placed.stmt);
      let exhausted: string | null = null;
      while (meet !== undefined && 'exhausted' in meet) {
        // member 0's host has no rendezvous port left (DESIGN.md §15): the gang is placed again
        // without that host, a few times at most, before the attempt fails for want of a port
        placed.stmt.discard();
        exhausted ??= meet.exhausted;
        excluded.add(this.index.hostOf.get(meet.exhausted)!);
        const again = excluded.size > PORT_RETRIES ? null : this.placeNow(id, shape, classes, end, excluded).stmt;
        if (again === null) {
          const node = exhausted;
          return { category: 'insufficient-resources', cached: false, classes, reason: () => portReason(node) };
        }
        placed = enlarged(again);
        meet = this.rendezvousOf(placed.stmt);
      }
      planner?.committed(id, placed.stmt.held, end);
      this.commit(job, variant, placed, [], meet?.rendezvous);
      this.report(id, placed.shape.size, 'committed', true);
      return null;
    }
    const category: AbortCategory = classes.length === 0
      ? 'no-matching-hosts'
      : this.fitsEmpty(variant, classes) ? 'insufficient-resources' : 'placement-unsatisfiable';
    // a preemption that makes room clears this cache, so the entry never outlives what it says
    this.unsatisfiable.set(cacheKey, { category, jobId: id });
    return { category, cached: false, classes, reason: () => this.reasonFor(variant, shape, classes, category) };
  }

  /**
   * Places a gang now, delaying no reservation made earlier in this session: the placement as it
   * would be without reservations when it delays none, else the search again passing over the
   * hosts where it would (`delaying`: the hosts of the first placement, when only that one fitted).
   */
  private placeNow(id: string, shape: GangShape, classes: readonly HostClass[], end: number, excluded: ReadonlySet<number> = NO_HOSTS): { stmt: Statement | null; delaying: number[] | null } {
    const planner = this.planner;
    // hosts passed over (member 0's hosts without a rendezvous port): such a search says nothing
    // about the cluster, so it feeds no memo of failures
    const exclude: Avoid | undefined = excluded.size === 0 ? undefined : (h) => excluded.has(h);
    let stmt: Statement | null;
    if (exclude === undefined) stmt = allocateGang(this.index, id, shape, classes, this.stats);
    else {
      const memo = this.index.memo;
      this.index.memo = 'read';
      stmt = allocateGang(this.index, id, shape, classes, this.stats, exclude);
      this.index.memo = memo;
    }
    if (stmt === null || planner === null || !planner.violates(end, stmt.held)) return { stmt, delaying: null };
    const hosts = stmt.held.map((d) => d.host);
    stmt.discard();
    // a search that passes hosts over says nothing about the cluster: it feeds no memo of failures
    this.index.memo = 'read';
    const reserved = planner.avoid(end);
    stmt = allocateGang(this.index, id, shape, classes, this.stats, exclude === undefined || reserved === null ? reserved ?? exclude : (h, demand) => excluded.has(h) || reserved(h, demand));
    this.index.memo = 'on';
    // roles sharing a host could still add up past an allowance together
    if (stmt !== null && planner.violates(end, stmt.held)) {
      stmt.discard();
      stmt = null;
    }
    return stmt === null ? { stmt: null, delaying: hosts } : { stmt, delaying: null };
  }

  /**
   * An elastic gang placed at its minimum, grown to the largest size that fits now (DESIGN.md
   * §13: each role in placement order, within its queues' max) and placed at that size instead;
   * `place` places it at a size as the minimum was placed (delaying no reservation).
   */
  private enlarge(job: JobState, variant: Variant, minimum: Statement, leaf: string, place: (shape: GangShape) => Statement | null): Placed {
    const request = variant.request;
    minimum.discard();
    const { counts, stmt } = this.largestPlacement(job.spec.id, request, leaf, minCounts(request), fullCounts(request), (c) => place(partShape(request, c)))!;
    return { stmt, shape: partShape(request, counts), demand: this.ledger === null ? null : countsDemand(request, counts) };
  }

  /**
   * The largest counts from `lower` up to `upper` (`largestFit`: each role in placement order) at
   * which the job's queues admit `counts` members and `place` places them, placed; null when that
   * is no member at all (growth from 0 that found no room).
   */
  private largestPlacement(id: string, request: JobRequest, leaf: string, lower: readonly number[], upper: readonly number[], place: (counts: readonly number[]) => Statement | null): { counts: number[]; stmt: Statement } | null {
    const ledger = this.ledger;
    const placeAt = (counts: readonly number[]): Statement | null =>
      (ledger !== null && ledger.quotaIssue(leaf, countsDemand(request, counts)) !== null ? null : place(counts));
    const counts = largestFit(request, lower, upper, (c) => {
      const probe = placeAt(c);
      probe?.discard();
      return probe !== null;
    });
    if (counts.every((n) => n === 0)) return null;
    const stmt = placeAt(counts);
    if (stmt === null) throw new Error(`elastic job ${id} fitted ${counts.join('+')} members it then could not place`);
    return { counts, stmt };
  }

  /**
   * A running elastic gang below its full size grows (DESIGN.md §13): as many more members as fit
   * now, each role in placement order, within its queues' max and delaying no reservation, on hosts
   * that keep its placement (`growthHosts`); all the members added at once, or nothing written.
   */
  private grow(job: JobState): void {
    const id = job.spec.id;
    // a gang whose members have begun to finish is winding down, not growing
    if (this.resized.has(id) || job.members.some((m) => m !== null && m.done)) return;
    const request = activeRequest(job);
    const variant = this.variantsOf(job)[job.alternative ?? 0]!;
    const classes = this.classesFor(variant);
    if (classes.length === 0) return;
    const held = heldCounts(job, request);
    // a role none of whose hosts has room for one more member now cannot grow (most gangs waiting
    // to grow, on a busy cluster): no search for it
    const index = this.index;
    const room = fullCounts(request).map((c, i) => {
      const r = request.roles[i]!.resources;
      return c > held[i]! && classes.some((k) => index.mostMembers(k, r, request.placement.gpuLocality && r.gpus > 0) >= 1) ? c - held[i]! : 0;
    });
    if (room.every((n) => n === 0)) return;
    const ledger = this.ledger;
    const leaf = ledger?.leafOf(job.spec) ?? '';
    const planner = this.planner;
    const end = this.at + (planner === null ? 0 : plannedRuntime(job, this.base.policy!));
    const allowed = this.growthHosts(job, request);
    if (allowed === null) return;
    const reserved = planner?.avoid(end) ?? null;
    const avoid: Avoid = (h, demand) => !allowed(h) || (reserved !== null && reserved(h, demand));
    const placeExtra = (extra: readonly number[]): Statement | null => {
      // a search that passes hosts over says nothing about the cluster: it feeds no memo of failures
      this.index.memo = 'read';
      const stmt = allocateGang(this.index, id, partShape(request, extra, held), classes, this.stats, avoid);
      this.index.memo = 'on';
      if (stmt !== null && planner !== null && planner.violates(end, stmt.held)) {
        stmt.discard();
        return null;
      }
      return stmt;
    };
    this.stats.allocatorRuns++;
    const grown = this.largestPlacement(id, request, leaf, room.map(() => 0), room, placeExtra);
    if (grown === null) return;
    const { counts: extra, stmt } = grown;
    const added = extra.reduce((n, k) => n + k, 0);
    planner?.committed(id, stmt.held, end);
    const bound = this.boundOf(id, stmt);
    const gpus = new Map(bound.map((b) => [b.member, b.gpuIds]));
    const allocations = resizedAllocations(job, new Set(), this.allocationsOf(stmt), (m) => gpus.get(m) ?? job.members[m]?.gpuIds ?? []);
    const resized: GangResized = { type: 'GangResized', jobId: id, session: this.session, at: this.at, allocations, members: heldMembers(job) + added };
    this.emit([...stmt.events, ...bound, resized]);
    if (ledger !== null) {
      const demand = countsDemand(request, extra);
      ledger.add(leaf, demand, 1);
      addAllocation(this.free, demand, -1);
    }
    this.resized.add(id);
    this.running?.forget(id);
    this.stats.grown++;
    this.stats.membersPlaced += added;
    this.shares.user.delete(job.spec.identity.user);
    this.shares.queue.delete(job.spec.identity.queue);
  }

  /**
   * The hosts an elastic gang's new members may take so that the whole gang keeps its placement
   * (DESIGN.md §13), or null when none may: same-node, only its host; spread and ptile, only hosts
   * it does not use yet (the new members are placed by the same rule among themselves); GPUs with
   * gpuLocality, only new hosts (a host's NVLink domain was chosen for the members there); with a
   * required topology, only hosts in its domain.
   */
  private growthHosts(job: JobState, request: JobRequest): ((h: number) => boolean) | null {
    const index = this.index;
    const used = new Set<number>();
    for (const m of job.members) {
      const h = m === null ? undefined : index.hostOf.get(m.node);
      if (h !== undefined) used.add(h);
    }
    const p = request.placement;
    const gpus = request.roles.some((r) => r.resources.gpus > 0);
    if (p.policy === 'same-node' && p.gpuLocality && gpus) return null;
    const newOnly = p.policy === 'spread' || p.ptile !== undefined || (p.gpuLocality && gpus);
    const topology = p.topology?.mode === 'required' ? p.topology.key : null;
    const labelOf = (h: number): string | number | undefined => index.classes[index.cls[h]!]!.spec.labels[topology!];
    const domain = topology === null || used.size === 0 ? undefined : labelOf(used.values().next().value!);
    return (h) => {
      if (p.policy === 'same-node' ? !used.has(h) : newOnly && used.has(h)) return false;
      return topology === null || labelOf(h) === domain;
    };
  }

  /**
   * A failed attempt: its category is the closest variant's (DESIGN.md §13; the only one's for a
   * job without alternatives), served from the cache only when every variant was; a job short of
   * resources is reserved at the earliest start over its variants short of resources.
   */
  private fail(job: JobState, variants: readonly Variant[], misses: readonly Miss[]): void {
    const stats = this.stats;
    let closest = 0;
    for (let i = 1; i < misses.length; i++) if (closeness(misses[i]!.category) > closeness(misses[closest]!.category)) closest = i;
    const miss = misses[closest]!;
    const cached = misses.every((m) => m.cached);
    for (const m of misses) {
      if (m.cached) stats.cacheHits++;
      else if (m.category === 'quota') stats.quotaRefused++;
      else if (m.category === 'reserved') stats.backfillRefused++;
    }
    if (!cached) stats.failed++;
    const reason = job.spec.alternatives === undefined ? miss.reason : (): AbortReason => alternativesReason(misses, closest);
    const wrote = this.pend(job, miss.category, reason);
    // a job pended from the cache gets no reservation (DESIGN.md §11) behind the job whose failure
    // the cache holds when that one is reserved (it plans alike), nor one over quota or held back;
    // when that one is not (it committed another alternative), a job behind this one in the order
    // would take the place, and this one, ahead of it, the room when it frees: the promise broken
    const planner = this.planner;
    const behindReserved = cached && misses.some((m) => m.cachedBy !== undefined && planner?.reserves(m.cachedBy) === true);
    if (miss.category === 'insufficient-resources' && !behindReserved && planner !== null && planner.room > 0) {
      const plans = variants.flatMap((v, i) => (misses[i]!.category === 'insufficient-resources' ? [{ alternative: v.alternative, shape: v.shape, classes: misses[i]!.classes ?? this.classesFor(v) }] : []));
      this.reserve(job, plans, plannedRuntime(job, this.base.policy!));
    } else this.clearReservation(job);
    this.report(job.spec.id, variants[closest]!.shape.size, cached ? 'cached' : 'failed', wrote);
  }

  /**
   * Plans a blocked job's reservation at the earliest start over the plans given (one per variant
   * short of resources; ties to the first): written when new, moved or on other hosts; cleared
   * when it has no finite start.
   */
  private reserve(job: JobState, plans: readonly { alternative: number | undefined; shape: GangShape; classes: readonly HostClass[] }[], runtime: number): void {
    let planned: PlannedReservation | null = null;
    let alternative: number | undefined;
    for (const plan of plans) {
      const p = this.planner!.plan(job.spec.id, plan.shape, plan.classes, runtime);
      if (p !== null && (planned === null || p.startAt < planned.startAt)) {
        planned = p;
        alternative = plan.alternative;
      }
    }
    if (planned === null) {
      this.clearReservation(job, 'no-start');
      return;
    }
    this.planner!.add(planned);
    this.stats.reserved++;
    const was = job.reservation;
    const hosts = planned.hosts;
    if (was !== undefined && was.startAt === planned.startAt && was.alternative === alternative && was.hosts.length === hosts.length && was.hosts.every((h, i) => h === hosts[i])) return;
    const reserved: GangReserved = { type: 'GangReserved', jobId: job.spec.id, session: this.session, at: this.at, startAt: planned.startAt, hosts };
    // the variant it is planned for (DESIGN.md §13); a job without alternatives reserves as it always did
    if (alternative !== undefined) reserved.alternative = alternative;
    this.emit([reserved]);
  }

  /**
   * Ends a job's reservation, if it has one, after an attempt that did not reserve it: it was
   * displaced by the jobs ahead of it, or (no planner) the policy has reservations off.
   */
  private clearReservation(job: JobState, reason: ReservationCleared['reason'] = this.planner === null ? 'policy' : 'displaced'): void {
    const cleared = reservationCleared(job, this.session, reason);
    if (cleared.length > 0) this.emit(cleared);
  }

  // A failed attempt writes nothing when it ends as the job's recorded pend reason (log growth
  // follows change); explain() recomputes the host counts from the state whenever asked. A job
  // held back by a reservation (`reserved`) that finds no room at all while other jobs' reservations
  // stand still waits behind them: not news either. Under load, room frees and fills between
  // sessions and the reserved jobs commit and are replaced within a few sessions; writing each flip
  // cost a decision per pending job per session (38,509 of them in 225 transactions of a 200
  // gangs/s drill, and still 70,729 when only the reservation the reason named counted).
  private pend(job: JobState, category: AbortCategory, reason: () => AbortReason): boolean {
    const recorded = job.pendReason;
    if (recorded?.category === category) return false;
    if (category === 'insufficient-resources' && recorded?.category === 'reserved' && this.othersReserved(job)) return false;
    this.stats.abortsWritten++;
    const event: GangAborted = { type: 'GangAborted', jobId: job.spec.id, session: this.session, at: this.at, final: false, reason: reason() };
    this.emit([event]);
    return true;
  }

  /**
   * Whether reservations of other jobs stand: another pending job was reserved when the session
   * began, or one was reserved in it so far (the order by shares changes between sessions: a
   * reserved job may come after the jobs it holds back). Reservations off: none.
   */
  private othersReserved(job: JobState): boolean {
    if (this.planner === null) return false;
    return this.reservedAtStart > (job.reservation === undefined ? 0 : 1) || this.planner.reservations.length > 0;
  }

  /**
   * Tries to place a blocked job by stopping running gangs (DESIGN.md §12): the victims' stops and
   * requeues and the job's commit are one unit, so one transaction. False when no victim set
   * makes it fit (everything is then as it was).
   */
  private preempt(job: JobState, variant: Variant, leaf: string): boolean {
    const ledger = this.ledger!;
    const key = `${variant.fingerprint}\u0000${leaf}\u0000${job.spec.priority}`;
    if (this.noVictims.has(key)) return false;
    const classes = this.classesFor(variant);
    if (classes.length === 0) return false;
    const { shape } = variant;
    const end = this.at + (this.planner === null ? 0 : plannedRuntime(job, this.base.policy!));
    const p: Preemptor = { job, leaf, shape, classes, request: variant.demand!, avoid: this.planner?.avoid(end) ?? null };
    const victims = chooseVictims(p, ledger, this.index, this.running!, this.reclaim!, this.stats, this.free);
    if (victims === null) {
      this.noVictims.add(key);
      return false;
    }
    // more is free now than what this session learnt about failures assumed
    for (const c of this.index.classes) c.negatives = [];
    this.unsatisfiable.clear();
    this.heldBack.clear();
    this.noVictims.clear();
    this.reclaim!.clear();
    const stmt = allocateGang(this.index, job.spec.id, shape, classes, this.stats, p.avoid);
    if (stmt === null) throw new Error(`preemption for job ${job.spec.id} found victims but no placement`);
    // the victims stopped whole give their rendezvous ports back in the same transaction
    const freed: Rendezvous[] = [];
    for (const { gang } of victims.gangs) if (gang.slice === null && gang.job.rendezvous !== undefined) freed.push(gang.job.rendezvous);
    const meet = this.rendezvousOf(stmt, freed);
    if (meet !== undefined && 'exhausted' in meet) {
      // no rendezvous port on member 0's host even with the victims stopped: nobody is stopped
      stmt.discard();
      restoreVictims(victims, this.index, ledger);
      return false;
    }
    this.stats.preemptions++;
    const stops = this.stops(job, leaf, victims);
    // an elastic preemptor takes what the stops left free beyond its minimum too (at its minimum
    // after all when the larger placement moved member 0 to a host without a free port)
    const place = (s: GangShape): Statement | null => allocateGang(this.index, job.spec.id, s, classes, this.stats, p.avoid);
    let placed = isElastic(variant.request) ? this.enlarge(job, variant, stmt, leaf, place) : { stmt, shape, demand: variant.demand };
    let rendezvous = placed.stmt === stmt ? meet : this.rendezvousOf(placed.stmt, freed);
    if (rendezvous !== undefined && 'exhausted' in rendezvous) {
      placed.stmt.discard();
      placed = { stmt: place(shape)!, shape, demand: variant.demand };
      rendezvous = this.rendezvousOf(placed.stmt, freed);
    }
    if (rendezvous !== undefined && 'exhausted' in rendezvous) throw new Error(`preemption for job ${job.spec.id} placed at its minimum twice differently`);
    this.planner?.committed(job.spec.id, placed.stmt.held, end);
    this.commit(job, variant, placed, stops, rendezvous?.rendezvous);
    // the victims' users hold less now: the jobs still to try are ordered by the shares as they are
    this.order!.rekey();
    this.report(job.spec.id, shape.size, 'committed', true);
    return true;
  }

  /**
   * The victims' events, job by job in the order first taken: a gang taken whole is released,
   * aborted (category `preempted`, by the preemptor) and requeued; an elastic gang that gives up
   * only members above its minimum (DESIGN.md §13) releases those and writes `GangResized`.
   */
  private stops(preemptor: JobState, leaf: string, victims: Victims): SchedulerEvent[] {
    const out: SchedulerEvent[] = [];
    const by = preemptor.spec.id;
    const byJob = new Map<string, { job: JobState; kind: VictimKind; leaf: string; whole: boolean; members: Set<number> }>();
    for (const { gang, kind } of victims.gangs) {
      const id = gang.job.spec.id;
      let taken = byJob.get(id);
      if (taken === undefined) byJob.set(id, (taken = { job: gang.job, kind, leaf: gang.leaf, whole: false, members: new Set() }));
      if (gang.slice === null) taken.whole = true;
      else for (const m of gang.slice) taken.members.add(m);
      for (const u of gang.uses) this.index.touch(u.host);
      addAllocation(this.free, gang.request);
    }
    for (const { job: v, kind, leaf: victimLeaf, whole, members } of byJob.values()) {
      const id = v.spec.id;
      const why = kind === 'reclaim'
        ? `queue ${leaf} reclaims its guarantee from queue ${victimLeaf}, which borrows`
        : `priority ${preemptor.spec.priority} is above its ${v.spec.priority} in queue ${leaf}`;
      if (whole) {
        const reason: AbortReason = { category: 'preempted', message: `preempted by job ${by}: ${why}; the whole gang is released and requeued`, hosts: {}, by };
        out.push(...releaseAll(v, 'preempted'), { type: 'GangAborted', jobId: id, session: this.session, at: this.at, final: false, reason }, { type: 'JobPended', jobId: id, at: this.at });
        this.planner?.preempted(id);
        this.stats.preempted++;
        // an elastic gang stopped whole is no longer one to grow in its turn this session
        this.resized.add(id);
      } else {
        const allocations = resizedAllocations(v, members, [], (m) => v.members[m]?.gpuIds ?? []);
        out.push(...releaseAll(v, 'preempted', members), { type: 'GangResized', jobId: id, session: this.session, at: this.at, allocations, members: heldMembers(v) - members.size, by });
        this.resized.add(id);
        this.stats.shrunk++;
      }
      this.running!.forget(id);
      this.shares.user.delete(v.spec.identity.user);
      this.shares.queue.delete(v.spec.identity.queue);
    }
    return out;
  }

  /**
   * Where a placement's members would meet (DESIGN.md §15): on a log decided as contract v1.1,
   * undefined; else the rendezvous on member 0's host, or that host when it has no free port
   * (`freed`: ports of gangs stopped in the same transaction).
   */
  private rendezvousOf(stmt: Statement, freed: readonly Rendezvous[] = []): { rendezvous: Rendezvous } | { exhausted: string } | undefined {
    if (this.base.contract === undefined) return undefined;
    let first = stmt.held[0]!;
    for (const d of stmt.held) if (d.event.members[0]! < first.event.members[0]!) first = d;
    const nodeId = first.event.node;
    const ports = new Set(freed.filter((r) => r.node === nodeId).map((r) => r.port));
    const rendezvous = rendezvousAt(shardGet(this.draft.nodes, nodeId)!, ports);
    return rendezvous === null ? { exhausted: nodeId } : { rendezvous };
  }

  private commit(job: JobState, variant: Variant, placed: Placed, before: readonly SchedulerEvent[], rendezvous: Rendezvous | undefined): void {
    const id = job.spec.id;
    const { stmt, shape, demand } = placed;
    const committed: GangCommitted = { type: 'GangCommitted', jobId: id, session: this.session, at: this.at, allocations: this.allocationsOf(stmt) };
    // which variant committed (DESIGN.md §13); a job without alternatives commits as it always did
    if (variant.alternative !== undefined) committed.alternative = variant.alternative;
    // contract v1.2: where the members meet, and the attempt after the first
    if (rendezvous !== undefined) committed.rendezvous = rendezvous;
    if ((job.attempt ?? 0) > 0) committed.attempt = job.attempt;
    // the whole Statement in order: debits and reversals (failed plans included), binds, decision
    this.emit([...before, ...stmt.events, ...this.boundOf(id, stmt), committed]);
    if (this.ledger !== null) {
      this.ledger.add(this.ledger.leafOf(job.spec), demand!, 1);
      addAllocation(this.free, demand!, -1);
    }
    this.stats.committed++;
    this.stats.membersPlaced += shape.size;
    this.shares.user.delete(job.spec.identity.user);
    this.shares.queue.delete(job.spec.identity.queue);
  }

  /** The binds of a statement's held debits, by member number (an elastic gang's numbers may have gaps). */
  private boundOf(jobId: string, stmt: Statement): MemberBound[] {
    const bound: MemberBound[] = [];
    for (const d of stmt.held) {
      const e = d.event;
      e.members.forEach((member, k) => {
        bound.push({ type: 'MemberBound', jobId, member, node: e.node, role: e.role, gpuIds: e.gpuIds.slice(k * d.gpusPerMember, (k + 1) * d.gpusPerMember) });
      });
    }
    return bound.sort((a, b) => a.member - b.member);
  }

  /** A statement's held debits as allocations, in the order of their first members; their hosts are touched (placed on). */
  private allocationsOf(stmt: Statement): Allocation[] {
    const held = [...stmt.held].sort((a, b) => a.event.members[0]! - b.event.members[0]!);
    return held.map((d) => {
      const e = d.event;
      this.index.touch(d.host);
      return {
        node: e.node,
        role: e.role,
        members: [...e.members],
        gpuIds: [...e.gpuIds],
        resources: { cpu: e.resources.cpu, memoryMb: e.resources.memoryMb, gpus: e.resources.gpus },
      };
    });
  }

  private classesFor(variant: Variant): HostClass[] {
    const key = variant.request.select;
    let classes = this.selectClasses.get(key);
    if (classes === undefined) {
      const ast = variant.ast;
      classes = this.index.classes.filter((c) => ast === null || evalSelect(ast, { labels: c.spec.labels, capacity: c.spec.capacity, gpus: c.spec.gpus.length }));
      this.selectClasses.set(key, classes);
    }
    return classes;
  }

  private fitsEmpty(variant: Variant, classes: readonly HostClass[]): boolean {
    let fits = this.emptyFits.get(variant.fingerprint);
    if (fits === undefined) {
      fits = fitsEmptyCluster(this.index, variant.shape, classes);
      this.emptyFits.set(variant.fingerprint, fits);
    }
    return fits;
  }

  private reasonFor(variant: Variant, shape: GangShape, classes: readonly HostClass[], category: AbortCategory): AbortReason {
    const heaviest = shape.roles[0]!;
    const counts = this.counter.count(classes, heaviest.resources, shape.placement.gpuLocality);
    const gang = `${shape.size} member${shape.size === 1 ? '' : 's'} (${describePlacement(shape)})`;
    const message = category === 'no-matching-hosts'
      ? `no up, undrained host matches select ${JSON.stringify(variant.request.select)} (${counts.total} hosts known)`
      : category === 'placement-unsatisfiable'
        ? `no plan places the ${gang} even on the cluster as it is now with every host empty`
        : `not enough free resources for the ${gang} now; ${counts.fit} of ${counts.eligible} matching hosts could take one '${heaviest.name}' member`;
    // a required topology (DESIGN.md §13) names its domains and the room in each (null otherwise)
    const room = category === 'no-matching-hosts' ? null : topologyRoom(this.index, classes, shape, this.counter);
    return { category, message: room === null ? message : `${message}; all in one ${room.key}: ${room.message}`, hosts: counts.hosts };
  }

  private report(jobId: string, members: number, outcome: AttemptOutcome, wrote: boolean): void {
    this.options.onAttempt?.({ jobId, members, outcome, wrote });
  }

  // One gang's events are one unit, which the cutter keeps in one transaction (opening it on the
  // draft first when it starts one); then they are applied.
  private emit(unit: readonly SchedulerEvent[]): void {
    this.cutter.add(this.draft, unit);
    for (const event of unit) apply(this.draft, event, this.w);
    this.stats.events += unit.length;
  }
}

/** One request of a job as an attempt tries it: the job's own, or one of its alternatives. */
interface Variant {
  /** Its index among the job's alternatives (undefined: a job without alternatives). */
  alternative: number | undefined;
  request: JobRequest;
  shape: GangShape;
  /** What it asks of its queues (with queues defined; null otherwise). */
  demand: AllocationResources | null;
  /** Its unsatisfiable-cache fingerprint. */
  fingerprint: string;
  ast: SelectAst | null;
}

/** A gang as it is placed: its statement, its shape and what it asks of its queues (an elastic gang's at the size placed). */
interface Placed {
  stmt: Statement;
  shape: GangShape;
  demand: AllocationResources | null;
}

/** How a variant missed: its category, whether from the cache, its hosts (when tried) and its reason. */
interface Miss {
  category: AbortCategory;
  cached: boolean;
  /** Served from the cache: the job whose failure this session the entry holds. */
  cachedBy?: string;
  classes: HostClass[] | null;
  reason: () => AbortReason;
}

// How close a variant that missed came to committing (DESIGN.md §13): it fits but for a
// reservation; it would fit an emptier cluster; only its queue's max stops it; no plan fits even
// the empty cluster; no host passes its select.
/** How many hosts of member 0 without a free rendezvous port an attempt passes over before it fails (DESIGN.md §15). */
const PORT_RETRIES = 3;

const NO_HOSTS: ReadonlySet<number> = new Set();

/** Why a placement failed for want of a rendezvous port on member 0's host (DESIGN.md §15). */
function portReason(node: string): AbortReason {
  return { category: 'insufficient-resources', message: `no free rendezvous port on ${node}: every port of its range is held by a running gang`, hosts: { 'no-rendezvous-port': 1 } };
}

function closeness(category: AbortCategory): number {
  switch (category) {
    case 'reserved': return 5;
    case 'insufficient-resources': return 4;
    case 'quota': return 3;
    case 'placement-unsatisfiable': return 2;
    default: return 1;
  }
}

/** The reason of a failed attempt of a job with alternatives: the closest variant's category and hosts, how each fared. */
function alternativesReason(misses: readonly Miss[], closest: number): AbortReason {
  const reasons = misses.map((m) => m.reason());
  const cached = misses.every((m) => m.cached);
  return {
    category: reasons[closest]!.category,
    message: `no alternative fits: ${reasons.map((r, i) => `alternative ${i}: ${r.category}${misses[i]!.cached ? ' (cached)' : ''}: ${r.message}`).join('; ')}`,
    hosts: reasons[closest]!.hosts,
    ...(cached ? { cached: true as const } : {}),
    ...(reasons[closest]!.by === undefined ? {} : { by: reasons[closest]!.by }),
    alternatives: reasons.map((r, i) => ({ category: r.category, hosts: r.hosts, ...(misses[i]!.cached ? { cached: true as const } : {}) })),
  };
}

// The session-local cache's key: a request's fingerprint and the job's identity, like
// `unsatisfiableKey` (which keys the state's copy), in a cheaper unambiguous form (NUL never
// occurs in an id or a name).
function cacheKeyOf(job: JobState, fingerprint: string): string {
  const { user, queue, project } = job.spec.identity;
  return `${fingerprint}\u0000${user}\u0000${queue}\u0000${project}`;
}

function quotaReason(q: QuotaIssue): AbortReason {
  return {
    category: 'quota',
    message: `queue ${q.queue}: ${q.resource} in use ${q.used} plus this gang's ${q.request} would pass its max of ${q.max}`,
    hosts: {},
  };
}

function describePlacement(shape: GangShape): string {
  const p = shape.placement;
  const parts: string[] = [p.policy];
  if (p.ptile !== undefined) parts.push(`ptile ${p.ptile}`);
  if (p.gpuLocality) parts.push('gpuLocality');
  if (p.topology !== undefined) parts.push(`topology ${p.topology.key} ${p.topology.mode}`);
  return parts.join(', ');
}
