import type { JobState } from '../state.ts';
import { BinaryHeap } from './binaryHeap.ts';
import { popByCurrentShares, rekeyShares } from './jobQueue.ts';
import type { ShareOf } from './jobQueue.ts';
import { orderedBefore, position } from './pendingOrder.ts';
import type { OrderedBucket, OrderedJob } from './pendingOrder.ts';
import { enter, walkedBefore, walkedBuckets } from './pendingWalk.ts';
import type { Cursor, Walked } from './pendingWalk.ts';
import type { LeafOrder } from './queueOrder.ts';
import type { QueueLedger } from './queueLedger.ts';

/** Whether an attempt of a job would be served from the session's cache now and do nothing (`doesNothing`). */
export type DoesNothing = (job: JobState) => boolean;

/**
 * A walk over one leaf queue's part of the pending order (JobQueue's order, which QueueOrder keeps
 * inside a leaf) that gives the same jobs as JobQueue, at the same points, except those whose
 * attempt would do nothing: it keeps every bucket exactly where JobQueue would have it, so a
 * preemption (which empties the session's cache) only needs the keys read again. An attempt
 * served from the cache that does nothing changes nothing the order reads, so JobQueue would go on
 * giving the jobs of the top bucket and of those level with it, in submission order, while they
 * are in runs that would do nothing: those jobs are passed over at once, each run moved on by a
 * binary search.
 * Unlike PendingWalk it drops no run for the rest of the session: with queues a run may stop
 * being one that does nothing (a commit may take its queues to a max, a preemption empties the cache).
 */
export class LeafWalk implements LeafOrder<JobState> {
  private readonly heap = new BinaryHeap<Walked>(walkedBefore);
  /** Jobs passed over so far. */
  passed = 0;

  constructor(walked: readonly Walked[], private readonly at: number, private readonly share: ShareOf, private readonly nothing: DoesNothing) {
    for (const w of walked) this.settle(w);
    this.rekey();
  }

  /** The next job to try (the next JobQueue would give that does something), or null when every job has had its turn. */
  next(): JobState | null {
    for (;;) {
      const w = popByCurrentShares(this.heap, this.share);
      if (w === undefined) return null;
      const c = w.runs.peek()!;
      const head = c.run.jobs[c.next]!;
      if (!this.passable(c, head)) {
        w.runs.pop();
        c.next++;
        enter(w, c, this.at);
        this.settle(w);
        return head.job;
      }
      this.pass(w);
    }
  }

  /** Reads every bucket's shares again and orders the buckets by them (after a preemption they may have fallen). */
  rekey(): void {
    rekeyShares(this.heap, this.share);
  }

  // Passes over the jobs JobQueue would give now one after another, doing nothing: with the top
  // bucket (taken out of the heap, its head passable) go the buckets that rank level with it
  // (priority and shares: their jobs come in submission order among its own), every later bucket
  // after all of theirs; so the jobs of the group's passable runs before the first job of a run
  // of the group that is not passable. The group goes back into the heap at its new heads.
  private pass(w: Walked): void {
    const group = [w];
    const later: Walked[] = [];
    for (let top = this.heap.peek(); top !== undefined && top.priority === w.priority && top.userShare === w.userShare && top.queueShare === w.queueShare; top = this.heap.peek()) {
      this.heap.pop();
      // a key is never above the bucket's now: one whose shares moved ranks after the group
      const userShare = this.share('user', top.user);
      const queueShare = this.share('queue', top.queue);
      if (userShare === top.userShare && queueShare === top.queueShare) group.push(top);
      else {
        top.userShare = userShare;
        top.queueShare = queueShare;
        later.push(top);
      }
    }
    // the group's runs, taken out of their buckets' heaps (which order them by the jobs they are at)
    const runs = group.map((g) => {
      const list = [...g.runs.items];
      while (g.runs.pop() !== undefined);
      return list;
    });
    let limit: OrderedJob | null = null;
    const passable: Cursor[] = [];
    for (const c of runs.flat()) {
      const job = c.run.jobs[c.next]!;
      if (this.passable(c, job)) passable.push(c);
      else if (limit === null || orderedBefore(job, limit)) limit = job;
    }
    for (const c of passable) {
      const to = limit === null ? c.run.jobs.length : Math.max(c.next, position(c.run.jobs, limit));
      this.passed += to - c.next;
      c.next = to;
    }
    for (const [i, g] of group.entries()) {
      for (const c of runs[i]!) if (c.next < c.run.jobs.length) g.runs.push(c);
      this.settle(g);
    }
    for (const b of later) this.heap.push(b);
  }

  // Whether a run's jobs from `c.next` on would do nothing now: one plain request each, with the same cache key, recorded reason, user, queue and priority, so the same answer for all.
  private passable(c: Cursor, job: OrderedJob): boolean {
    return c.run.cacheKey !== null && this.nothing(job.job);
  }

  // A bucket back in the heap at its head, unless it has no job left.
  private settle(w: Walked): void {
    const c = w.runs.peek();
    if (c === undefined) return;
    w.head = c.run.jobs[c.next]!;
    this.heap.push(w);
  }
}

/** The walks of each leaf queue's part of the pending order, by leaf (the leaves without a job to try now left out). */
export function leafWalks(buckets: Iterable<OrderedBucket>, growing: readonly OrderedJob[], ledger: QueueLedger, at: number, share: ShareOf, nothing: DoesNothing): Map<string, LeafWalk> {
  const byLeaf = new Map<string, Walked[]>();
  for (const w of walkedBuckets(buckets, growing, at)) {
    const c = w.runs.peek();
    if (c === undefined) continue;
    const leaf = ledger.leafOf(c.run.jobs[c.next]!.job.spec);
    const list = byLeaf.get(leaf);
    if (list === undefined) byLeaf.set(leaf, [w]);
    else list.push(w);
  }
  return new Map([...byLeaf].map(([leaf, list]) => [leaf, new LeafWalk(list, at, share, nothing)]));
}
