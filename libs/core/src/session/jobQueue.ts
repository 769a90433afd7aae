import { BinaryHeap } from './binaryHeap.ts';

/** A pending job as the session orders it. */
export interface QueuedJob {
  id: string;
  priority: number;
  user: string;
  queue: string;
  submitIndex: number;
}

/** Reads a user's or a queue's current dominant share. */
export type ShareOf = (kind: 'user' | 'queue', name: string) => number;

/** A heap entry keyed by its user's and its queue's dominant shares as last read. */
export interface ShareKeyed {
  user: string;
  queue: string;
  userShare: number;
  queueShare: number;
}

interface Bucket extends ShareKeyed {
  priority: number;
  jobs: QueuedJob[];
  next: number;
}

/**
 * Pops the entry first by the shares as they are now (undefined when the heap is empty): an entry
 * whose shares moved since they were read is keyed again and put back (the lazy heap of DRF shares).
 */
export function popByCurrentShares<T extends ShareKeyed>(heap: BinaryHeap<T>, share: ShareOf): T | undefined {
  for (;;) {
    const b = heap.pop();
    if (b === undefined) return undefined;
    const userShare = share('user', b.user);
    const queueShare = share('queue', b.queue);
    if (userShare === b.userShare && queueShare === b.queueShare) return b;
    b.userShare = userShare;
    b.queueShare = queueShare;
    heap.push(b);
  }
}

/** Reads every entry's shares again and orders the heap by them (after a preemption they may have fallen, which the lazy keys would not see). */
export function rekeyShares<T extends ShareKeyed>(heap: BinaryHeap<T>, share: ShareOf): void {
  for (const b of heap.items) {
    b.userShare = share('user', b.user);
    b.queueShare = share('queue', b.queue);
  }
  heap.reorder();
}

/** The key of a (priority, user, queue) bucket of pending jobs, the unit of JobQueue's order. */
export function bucketKey(priority: number, user: string, queue: string): string {
  return JSON.stringify([priority, user, queue]);
}

/**
 * The session's job order (DESIGN.md §5): priority (higher first), then the user's DRF dominant
 * share (lower first), then the queue's, then submission order, then id. Jobs sit in FIFO buckets
 * per (priority, user, queue), and the buckets in a heap keyed by the shares they were last seen
 * with. Shares only grow within a session (commits add usage, nothing is released), so a stale key
 * is never too high: the top bucket is re-read when popped and pushed back if its shares moved,
 * which keeps each commit's re-keying lazy instead of touching every bucket of a user or queue.
 */
export class JobQueue {
  private readonly heap = new BinaryHeap<Bucket>((a, b) => this.before(a, b));

  constructor(jobs: readonly QueuedJob[], private readonly share: ShareOf) {
    const buckets = new Map<string, Bucket>();
    for (const job of jobs) {
      const key = bucketKey(job.priority, job.user, job.queue);
      let b = buckets.get(key);
      if (b === undefined) {
        b = { priority: job.priority, user: job.user, queue: job.queue, jobs: [], next: 0, userShare: share('user', job.user), queueShare: share('queue', job.queue) };
        buckets.set(key, b);
      }
      b.jobs.push(job);
    }
    for (const b of buckets.values()) {
      b.jobs.sort((x, y) => x.submitIndex - y.submitIndex || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
      this.heap.push(b);
    }
  }

  /** Orders the jobs left afresh, by the shares as they are now (after a preemption they may have fallen, which the lazy keys would not see). */
  rekey(): void {
    rekeyShares(this.heap, this.share);
  }

  /** The next job to try, or null when every job has had its turn. */
  next(): QueuedJob | null {
    const b = popByCurrentShares(this.heap, this.share);
    if (b === undefined) return null;
    const job = b.jobs[b.next++]!;
    if (b.next < b.jobs.length) this.heap.push(b);
    return job;
  }

  private before(a: Bucket, b: Bucket): boolean {
    if (a.priority !== b.priority) return a.priority > b.priority;
    if (a.userShare !== b.userShare) return a.userShare < b.userShare;
    if (a.queueShare !== b.queueShare) return a.queueShare < b.queueShare;
    const x = a.jobs[a.next]!;
    const y = b.jobs[b.next]!;
    if (x.submitIndex !== y.submitIndex) return x.submitIndex < y.submitIndex;
    return x.id < y.id;
  }
}
