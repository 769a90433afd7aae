import { JobQueue } from './jobQueue.ts';
import type { QueuedJob, ShareOf } from './jobQueue.ts';
import type { QueueLedger } from './queueLedger.ts';

/** The order of one leaf queue's jobs (JobQueue's, or a walk of the pending order in it). */
export interface LeafOrder<T> {
  /** The next job to try, or null when every job has had its turn. */
  next(): T | null;
  /** Orders the jobs left afresh, by the shares as they are now. */
  rekey(): void;
}

/**
 * The session's job order once queues are defined (DESIGN.md §12): hierarchical DRF. From the
 * root down, the sibling queue with the lowest weighted dominant share (ties by name) among those
 * with jobs left goes first; inside a leaf, the order of §5 (priority, the user's share,
 * submission order, id). Shares are read from the ledger at every pick, so each commit counts.
 * A leaf has jobs left until its order gives none: found out when it is picked, the pick is made
 * again from the root, which picks as if the leaf had been known to be done (nothing changed).
 */
export class QueueOrder<T> {
  // by queue, its leaves (itself included) whose order has not run out
  private readonly live = new Map<string, number>();
  private readonly done = new Set<string>();

  constructor(private readonly leaves: ReadonlyMap<string, LeafOrder<T>>, private readonly ledger: QueueLedger) {
    for (const leaf of leaves.keys()) for (const q of ledger.path(leaf)) this.live.set(q, (this.live.get(q) ?? 0) + 1);
  }

  /** The order of `jobs`, each leaf's by JobQueue. */
  static of(jobs: readonly QueuedJob[], ledger: QueueLedger, share: ShareOf, leafOf: (job: QueuedJob) => string): QueueOrder<QueuedJob> {
    const byLeaf = new Map<string, QueuedJob[]>();
    for (const job of jobs) {
      const leaf = leafOf(job);
      const list = byLeaf.get(leaf);
      if (list === undefined) byLeaf.set(leaf, [job]);
      else list.push(job);
    }
    return new QueueOrder(new Map([...byLeaf].map(([leaf, list]) => [leaf, new JobQueue(list, share)])), ledger);
  }

  /**
   * Orders each leaf's jobs afresh: after a preemption users' shares fell, which the leaves' lazy
   * heaps (keyed by shares that only grow) would not see.
   */
  rekey(): void {
    for (const leaf of this.leaves.values()) leaf.rekey();
  }

  /** The next job to try, or null when every job has had its turn. */
  next(): T | null {
    let parent = '';
    for (;;) {
      let best: string | null = null;
      let bestShare = 0;
      for (const q of this.ledger.children.get(parent) ?? []) {
        if ((this.live.get(q) ?? 0) === 0) continue;
        const s = this.ledger.share(q);
        if (best === null || s < bestShare) {
          best = q;
          bestShare = s;
        }
      }
      if (best === null) return null;
      const own = this.done.has(best) ? undefined : this.leaves.get(best);
      if (own === undefined) {
        parent = best;
        continue;
      }
      const job = own.next();
      if (job !== null) return job;
      this.done.add(best);
      for (const q of this.ledger.path(best)) this.live.set(q, this.live.get(q)! - 1);
      parent = '';
    }
  }
}
