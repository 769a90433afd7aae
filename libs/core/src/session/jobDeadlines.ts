import { SHARD_LEAF_DEPTH, leafGet } from '../shard.ts';
import type { ShardLeaf, Sharded } from '../shard.ts';
import type { JobState } from '../state.ts';

/**
 * One kind of deadline (a pending job's timeout, a running gang's runtime limit) over the jobs an
 * id table names: the earliest, and the jobs due. The earliest under each part of the id trie (a
 * level or a leaf) is memoised while both that part and the part of the jobs trie beside it are
 * the same frozen objects (structural sharing): a change to one job rereads one leaf and the 16
 * slots of each level above it, not every leaf.
 */
export class JobDeadlines {
  private readonly memo = new WeakMap<object, { jobs: unknown; earliest: number | null }>();

  /** `of`: a job's deadline, or null without one. */
  constructor(private readonly of: (job: JobState) => number | null) {}

  /** The earliest deadline of the jobs `ids` names, or null. */
  earliest(ids: Sharded<string>, jobs: Sharded<JobState>): number | null {
    return this.partEarliest(ids, jobs, 0).earliest;
  }

  /** The jobs `ids` names whose deadline is due at `at`, by id. */
  due(ids: Sharded<string>, jobs: Sharded<JobState>, at: number): JobState[] {
    const out: JobState[] = [];
    this.collectDue(ids, jobs, 0, at, out);
    return out.sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0));
  }

  // the jobs due under one part of the id trie (at SHARD_LEAF_DEPTH: a leaf), skipping parts whose earliest is later
  private collectDue(ids: readonly unknown[], jobs: readonly unknown[] | null | undefined, depth: number, at: number, out: JobState[]): void {
    const d = this.partEarliest(ids, jobs, depth).earliest;
    if (d === null || d > at) return;
    if (depth === SHARD_LEAF_DEPTH) {
      for (const id of ids as ShardLeaf<string>) {
        const job = leafGet(jobs as ShardLeaf<JobState> | null | undefined, id);
        const deadline = job === undefined ? null : this.of(job);
        if (deadline !== null && deadline <= at) out.push(job!);
      }
      return;
    }
    for (let i = 0; i < ids.length; i++) {
      const child = ids[i];
      if (child !== null && child !== undefined) this.collectDue(child as unknown[], jobs?.[i] as unknown[] | null | undefined, depth + 1, at, out);
    }
  }

  // the earliest deadline under one part of the id trie, and whether it and everything read for it
  // were frozen (a part that can still change in place, a draft's or a bulk replay's, is never memoised)
  private partEarliest(ids: readonly unknown[], jobs: readonly unknown[] | null | undefined, depth: number): { earliest: number | null; frozen: boolean } {
    const cached = this.memo.get(ids);
    if (cached !== undefined && cached.jobs === jobs) return { earliest: cached.earliest, frozen: true };
    let earliest: number | null = null;
    let frozen = Object.isFrozen(ids) && (jobs === undefined || jobs === null || Object.isFrozen(jobs));
    if (depth === SHARD_LEAF_DEPTH) {
      for (const id of ids as ShardLeaf<string>) {
        const job = leafGet(jobs as ShardLeaf<JobState> | null | undefined, id);
        const d = job === undefined ? null : this.of(job);
        if (d !== null && (earliest === null || d < earliest)) earliest = d;
      }
    } else {
      for (let i = 0; i < ids.length; i++) {
        const child = ids[i];
        if (child === null || child === undefined) continue;
        const sub = this.partEarliest(child as unknown[], jobs?.[i] as unknown[] | null | undefined, depth + 1);
        frozen &&= sub.frozen;
        if (sub.earliest !== null && (earliest === null || sub.earliest < earliest)) earliest = sub.earliest;
      }
    }
    if (frozen) this.memo.set(ids, { jobs, earliest });
    return { earliest, frozen };
  }
}
