import { leafGet, shardLeaf, shardLeaves } from '../shard.ts';
import type { ShardLeaf } from '../shard.ts';
import { foldParts } from '../shardDiff.ts';
import type { PartFold, ShardPart } from '../shardDiff.ts';
import type { JobState, State } from '../state.ts';
import type { Deadlines } from './deadlines.ts';
import type { QueuedJob } from './jobQueue.ts';
import type { PendingLeaf, PendingLeaves } from './pendingLeaves.ts';
import type { OrderedBucket, OrderedJob, PendingOrder } from './pendingOrder.ts';
import type { SessionStart } from './sessionStart.ts';

/** What the choice of jobs reads: the state the session began on, its stamp, what its deadlines did, and the pending table as earlier sessions read it. */
export interface JobChoiceInput {
  state: State;
  at: number;
  start: SessionStart;
  /** The deadlines as earlier turns read them (a turn context's, or a fresh one). */
  deadlines: Deadlines;
  /** The pending table by leaf (a turn context's), or null to read every leaf. */
  pending: PendingLeaves | null;
  /** The pending jobs in order kept across sessions (a turn context's), or null to queue and order them each time. */
  order: PendingOrder | null;
}

/** The jobs a session tries, in no order yet, with their records and what was counted on the way. */
export interface JobChoice {
  queued: QueuedJob[];
  /** Each queued job's record in the state the session began on (a job is tried at most once per session). */
  records: Map<string, JobState>;
  /** Pending jobs reserved when the session began (a job held back waits behind them). */
  reservedAtStart: number;
  /** Pending jobs not tried: nothing they could use changed since their last attempt. */
  notRetried: number;
  /**
   * Instead of `queued`, when every pending job is tried and the order is kept: its buckets, and
   * the running elastic gangs that take their turn to grow (null otherwise).
   */
  ordered: { buckets: readonly OrderedBucket[]; growing: OrderedJob[] } | null;
}

/**
 * Step 3 of a session, which jobs to try (Nomad's blocked evaluations): those pending since the
 * last session, or all of them when capacity could have grown since (a release, a node joining, a
 * runtime limit just now, a new policy); under a policy also every reserved job and every job held
 * back by a reservation, since the reservations of this session are planned anew (a gang whose
 * guard against preemption ran out may now be stopped for a job that waits). When capacity could
 * have grown, running elastic gangs below their full size take their turn to grow too.
 */
export function chooseJobs({ state: base, at, start, deadlines, pending: table, order }: JobChoiceInput): JobChoice {
  const { timedOut, stopped, reservationFreed } = start;
  const guardExpired = (deadlines.nextGuardExpiry(base) ?? Number.POSITIVE_INFINITY) <= at;
  const retryAll = base.freeEpoch > base.sessionEpoch || stopped.size > 0 || reservationFreed || guardExpired;
  // every pending job is tried: they are read from the order kept across sessions, not queued
  if (retryAll && order !== null && timedOut.size === 0) {
    const buckets = order.update(base);
    const growing = growingGangs(base, stopped).map((job) => ({ job, submitIndex: job.submitIndex, id: job.spec.id }));
    return { queued: [], records: new Map(), reservedAtStart: order.reserved, notRetried: 0, ordered: { buckets: [...buckets.values()], growing } };
  }
  const read = new PendingRead(base, at, timedOut, retryAll);
  // leaves whose jobs were read by an earlier session and have not changed since hold no job new
  // since the last session: only their planned jobs are tried (none when capacity could have grown: all are)
  foldParts(timedOut.size > 0 ? null : table, base.pending, base.jobs, read);
  // running elastic gangs below their full size take their turn to grow (DESIGN.md §13) when
  // capacity could have grown since the last session, in the order of the pending jobs
  if (retryAll) for (const job of growingGangs(base, stopped)) read.queue(job);
  return { queued: read.queued, records: read.records, reservedAtStart: read.reservedAtStart, notRetried: read.notRetried, ordered: null };
}

// What a part of the pending table (a level, or a leaf) holds beside the part of the jobs table at
// the same place, for one choice of jobs: remembered for a part that is the same frozen object
// beside the same jobs part (`foldParts`), else read (a level from its parts); the jobs queued on
// the way, and what was counted. (A class: its methods are the same functions in every session.)
class PendingRead implements PartFold<PendingLeaf> {
  readonly queued: QueuedJob[] = [];
  readonly records = new Map<string, JobState>();
  reservedAtStart = 0;
  notRetried = 0;
  private readonly policy: boolean;
  private readonly prevSessionEpoch: number;

  constructor(base: State, private readonly at: number, private readonly timedOut: ReadonlySet<string>, private readonly retryAll: boolean) {
    this.policy = base.policy !== undefined;
    this.prevSessionEpoch = base.sessionEpoch;
  }

  queue(job: JobState): void {
    this.records.set(job.spec.id, job);
    this.queued.push({ id: job.spec.id, priority: job.spec.priority, user: job.spec.identity.user, queue: job.spec.identity.queue, submitIndex: job.submitIndex });
  }

  leaf(ids: readonly unknown[], beside: ShardPart): PendingLeaf {
    const jobs = beside as ShardLeaf<JobState> | null | undefined;
    const learnt = this.empty();
    for (const id of ids as readonly string[]) {
      const job = leafGet(jobs, id);
      if (job === undefined || this.timedOut.has(id) || job.status !== 'pending') continue;
      if (job.reservation !== undefined) learnt.reserved++;
      // a gang restarting after a member's failure (contract v1.2) is planned: every session
      // looks at it, and the one at or after its backoff's end tries it (it is then news, like a
      // job just pending)
      const planned = job.notBefore !== undefined || (this.policy && (job.reservation !== undefined || job.pendReason?.category === 'reserved'));
      if (planned) learnt.planned.push(job);
      else {
        learnt.unplanned++;
        learnt.newest = Math.max(learnt.newest, job.pendingEpoch);
      }
      if (job.notBefore !== undefined && job.notBefore > this.at) continue;
      if (!this.retryAll && !planned && job.pendingEpoch <= this.prevSessionEpoch) {
        this.notRetried++;
        continue;
      }
      this.queue(job);
    }
    this.reservedAtStart += learnt.reserved;
    return learnt;
  }

  empty(): PendingLeaf {
    return { policy: this.policy, planned: [], unplanned: 0, newest: -1, reserved: 0 };
  }

  add(level: PendingLeaf, part: PendingLeaf): void {
    for (const job of part.planned) level.planned.push(job);
    level.unplanned += part.unplanned;
    level.newest = Math.max(level.newest, part.newest);
    level.reserved += part.reserved;
  }

  // (no job of it may be new since the last session: a record made before that session was applied is not used)
  reuse(known: PendingLeaf): boolean {
    if (this.retryAll || known.policy !== this.policy || known.newest > this.prevSessionEpoch) return false;
    this.reservedAtStart += known.reserved;
    this.notRetried += known.unplanned;
    for (const job of known.planned) if (job.notBefore === undefined || job.notBefore <= this.at) this.queue(job);
    return true;
  }
}

// The running elastic gangs below their full size, not stopped at the session's start.
function growingGangs(base: State, stopped: ReadonlySet<string>): JobState[] {
  const out: JobState[] = [];
  if (base.elastic === undefined) return out;
  for (const [shard, ids] of shardLeaves(base.elastic)) {
    const jobs = shardLeaf(base.jobs, shard);
    for (const id of ids) {
      const job = leafGet(jobs, id);
      if (job === undefined || job.status !== 'running' || stopped.has(id)) continue;
      out.push(job);
    }
  }
  return out;
}
