import { SHARD_FANOUT, SHARD_LEAF_DEPTH, leafGet } from '../shard.ts';
import type { ShardLeaf, Sharded } from '../shard.ts';
import { PartMemo, foldParts } from '../shardDiff.ts';
import type { PartFold, ShardPart } from '../shardDiff.ts';
import type { JobState } from '../state.ts';

/**
 * One kind of deadline (a pending job's timeout, a running gang's runtime limit) over the jobs an
 * id table names: the earliest, and the jobs due. The earliest under each part of the id trie (a
 * level or a leaf) is memoised while both that part and the part of the jobs trie beside it are
 * the same frozen objects (`PartMemo`): a change to one job rereads one leaf and the 16 slots of
 * each level above it, not every leaf.
 */
export class JobDeadlines {
  private readonly memo = new PartMemo<{ earliest: number | null }>();
  private readonly fold: PartFold<{ earliest: number | null }>;

  /** `of`: a job's deadline, or null without one. */
  constructor(private readonly of: (job: JobState) => number | null) {
    this.fold = {
      leaf: (ids, jobs) => {
        let earliest: number | null = null;
        for (const id of ids as ShardLeaf<string>) {
          const job = leafGet(jobs as ShardLeaf<JobState> | null | undefined, id);
          const d = job === undefined ? null : of(job);
          if (d !== null && (earliest === null || d < earliest)) earliest = d;
        }
        return { earliest };
      },
      empty: () => ({ earliest: null }),
      add: (level, part) => {
        if (part.earliest !== null && (level.earliest === null || part.earliest < level.earliest)) level.earliest = part.earliest;
      },
    };
  }

  /** The earliest deadline of the jobs `ids` names, or null. */
  earliest(ids: Sharded<string>, jobs: Sharded<JobState>): number | null {
    return foldParts(this.memo, ids, jobs, this.fold).earliest;
  }

  /** The jobs `ids` names whose deadline is due at `at`, by id. */
  due(ids: Sharded<string>, jobs: Sharded<JobState>, at: number): JobState[] {
    const out: JobState[] = [];
    this.collectDue(ids, jobs, 0, 0, at, out);
    return out.sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0));
  }

  // the jobs due under one part of the id trie (at SHARD_LEAF_DEPTH: a leaf), skipping parts whose earliest is later
  private collectDue(ids: readonly unknown[], jobs: ShardPart, depth: number, shard: number, at: number, out: JobState[]): void {
    const d = foldParts(this.memo, ids, jobs, this.fold, depth, shard).earliest;
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
      if (child !== null && child !== undefined) this.collectDue(child as unknown[], jobs?.[i] as ShardPart, depth + 1, shard * SHARD_FANOUT + i, at, out);
    }
  }
}
