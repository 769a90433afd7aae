import { JobQueue } from './jobQueue.ts';
import type { QueuedJob, ShareOf } from './jobQueue.ts';
import type { QueueLedger } from './queueLedger.ts';

/**
 * The session's job order once queues are defined (DESIGN.md §12): hierarchical DRF. From the
 * root down, the sibling queue with the lowest weighted dominant share (ties by name) among those
 * with jobs left goes first; inside a leaf, the order of §5 (priority, the user's share,
 * submission order, id). Shares are read from the ledger at every pick, so each commit counts.
 */
export class QueueOrder {
  private readonly leaves = new Map<string, JobQueue>();
  private readonly left = new Map<string, number>();

  constructor(jobs: readonly QueuedJob[], private readonly ledger: QueueLedger, private readonly share: ShareOf, leafOf: (job: QueuedJob) => string) {
    const byLeaf = new Map<string, QueuedJob[]>();
    for (const job of jobs) {
      const leaf = leafOf(job);
      const list = byLeaf.get(leaf);
      if (list === undefined) byLeaf.set(leaf, [job]);
      else list.push(job);
      for (const q of ledger.path(leaf)) this.left.set(q, (this.left.get(q) ?? 0) + 1);
    }
    for (const [leaf, list] of byLeaf) this.leaves.set(leaf, new JobQueue(list, share));
  }

  /**
   * Orders each leaf's jobs afresh: after a preemption users' shares fell, which the leaves' lazy
   * heaps (keyed by shares that only grow) would not see.
   */
  rekey(): void {
    for (const [leaf, queue] of this.leaves) this.leaves.set(leaf, new JobQueue(queue.rest(), this.share));
  }

  /** The next job to try, or null when every job has had its turn. */
  next(): QueuedJob | null {
    let parent = '';
    for (;;) {
      let best: string | null = null;
      let bestShare = 0;
      for (const q of this.ledger.children.get(parent) ?? []) {
        if ((this.left.get(q) ?? 0) === 0) continue;
        const s = this.ledger.share(q);
        if (best === null || s < bestShare) {
          best = q;
          bestShare = s;
        }
      }
      if (best === null) return null;
      const own = this.leaves.get(best);
      const job = own?.next() ?? null;
      if (job !== null) {
        for (const q of this.ledger.path(best)) this.left.set(q, this.left.get(q)! - 1);
        return job;
      }
      parent = best;
    }
  }
}
