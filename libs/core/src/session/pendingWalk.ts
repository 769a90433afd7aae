import type { JobState } from '../state.ts';
import { BinaryHeap } from './binaryHeap.ts';
import { bucketKey } from './jobQueue.ts';
import type { ShareOf } from './jobQueue.ts';
import { orderedBefore } from './pendingOrder.ts';
import type { OrderedBucket, OrderedJob, OrderedRun } from './pendingOrder.ts';

/** Whether every job left of a run would be served from the session's cache now, writing nothing (`unchangedMiss`). */
export type Passable = (run: OrderedRun) => boolean;

/** A run being walked: the index of its next job. */
export interface Cursor {
  readonly run: OrderedRun;
  next: number;
}

/** A bucket being walked: its runs by the job each is at, and the key it sits in the walk's heap with. */
export interface Walked {
  readonly priority: number;
  readonly user: string;
  readonly queue: string;
  // its runs by the job each is at: a bucket of thousands of runs (distinct requests) is not scanned for every job
  readonly runs: BinaryHeap<Cursor>;
  userShare: number;
  queueShare: number;
  head: OrderedJob;
}

/**
 * The buckets of `buckets` and `growing` (running elastic gangs that may grow: each takes its
 * place among the pending jobs of its bucket, in a run of its own) as walked from their start,
 * each run at its first job to try now; shares and heads not read yet.
 */
export function walkedBuckets(buckets: Iterable<OrderedBucket>, growing: readonly OrderedJob[], at: number): Walked[] {
  const walked = new Map<string, Walked>();
  const walk = (priority: number, user: string, queue: string): Walked => {
    const key = bucketKey(priority, user, queue);
    let w = walked.get(key);
    if (w === undefined) {
      w = { priority, user, queue, runs: new BinaryHeap<Cursor>((a, b) => orderedBefore(a.run.jobs[a.next]!, b.run.jobs[b.next]!)), userShare: 0, queueShare: 0, head: null! };
      walked.set(key, w);
    }
    return w;
  };
  for (const b of buckets) {
    const w = walk(b.priority, b.user, b.queue);
    for (const run of b.runs.values()) enter(w, { run, next: 0 }, at);
  }
  const grown = new Map<Walked, OrderedJob[]>();
  for (const e of growing) {
    const spec = e.job.spec;
    const w = walk(spec.priority, spec.identity.user, spec.identity.queue);
    grown.set(w, [...(grown.get(w) ?? []), e]);
  }
  for (const [w, jobs] of grown) enter(w, { run: { cacheKey: null, recorded: null, jobs: jobs.sort((a, b) => (orderedBefore(a, b) ? -1 : 1)) }, next: 0 }, at);
  return [...walked.values()];
}

/** A run enters its bucket at its first job not waiting out a backoff (not queued this session), if any. */
export function enter(w: Walked, c: Cursor, at: number): void {
  const jobs = c.run.jobs;
  while (c.next < jobs.length && (jobs[c.next]!.job.notBefore ?? at) > at) c.next++;
  if (c.next < jobs.length) w.runs.push(c);
}

/** JobQueue's order of buckets: priority (higher first), the user's share, the queue's, then the head job. */
export function walkedBefore(a: Walked, b: Walked): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.userShare !== b.userShare) return a.userShare < b.userShare;
  if (a.queueShare !== b.queueShare) return a.queueShare < b.queueShare;
  return orderedBefore(a.head, b.head);
}

/**
 * A session's walk over the pending order (DESIGN.md §5: priority, then DRF shares, then
 * submission, then id; JobQueue's order) that passes over the jobs whose attempt would be served
 * from the session's unsatisfiable cache and write nothing. Such an attempt changes nothing a later
 * job sees, and whether a run's jobs are passable only turns from no to yes within a session
 * (cache entries are never dropped without queues, reservations only fill up), so every job the
 * walk gives is the next one JobQueue would give that is not passable, at the state the session
 * has then: the same attempts in the same order, without the ones that do nothing.
 */
export class PendingWalk {
  private readonly heap = new BinaryHeap<Walked>(walkedBefore);
  /** Jobs passed over so far. */
  passed = 0;

  /** Walks `buckets` and `growing` (running elastic gangs that may grow: each takes its place among the pending jobs of its bucket). */
  constructor(
    buckets: Iterable<OrderedBucket>,
    growing: readonly OrderedJob[],
    private readonly at: number,
    private readonly share: ShareOf,
    private readonly passable: Passable,
  ) {
    for (const w of walkedBuckets(buckets, growing, at)) {
      const head = this.headOf(w);
      if (head === null) continue;
      w.head = head;
      w.userShare = share('user', w.user);
      w.queueShare = share('queue', w.queue);
      this.heap.push(w);
    }
  }

  /** The next job to try, or null when every job has had its turn or was passed over. */
  next(): JobState | null {
    for (;;) {
      const w = this.heap.pop();
      if (w === undefined) return null;
      const head = this.headOf(w);
      if (head === null) continue;
      const userShare = this.share('user', w.user);
      const queueShare = this.share('queue', w.queue);
      if (head !== w.head || userShare !== w.userShare || queueShare !== w.queueShare) {
        w.head = head;
        w.userShare = userShare;
        w.queueShare = queueShare;
        this.heap.push(w);
        continue;
      }
      // the head is the job of the run on top (headOf left it there)
      const taken = w.runs.pop()!;
      taken.next++;
      enter(w, taken, this.at);
      const after = this.headOf(w);
      if (after !== null) {
        w.head = after;
        this.heap.push(w);
      }
      return head.job;
    }
  }

  // The first job of a bucket to try now: the job of the first run not passable; runs found
  // passable are dropped (a run only turns passable within a session, so looking when it comes
  // first is the same as looking at every job).
  private headOf(w: Walked): OrderedJob | null {
    for (;;) {
      const c = w.runs.peek();
      if (c === undefined) return null;
      if (c.run.cacheKey !== null && this.passable(c.run)) {
        w.runs.pop();
        this.passed += c.run.jobs.length - c.next;
        continue;
      }
      return c.run.jobs[c.next]!;
    }
  }
}
