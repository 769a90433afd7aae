import { leafGet, shardLeaf, shardLeaves } from '../shard.ts';
import type { ShardLeaf, Sharded } from '../shard.ts';
import type { JobState } from '../state.ts';

/**
 * One kind of deadline (a pending job's timeout, a running gang's runtime limit) over the jobs an
 * id table names: the earliest, and the jobs due. The earliest per leaf is memoised while both the
 * id leaf and the jobs leaf beside it are the same frozen objects (structural sharing), so only
 * changed leaves are rescanned.
 */
export class JobDeadlines {
  private readonly memo = new WeakMap<ShardLeaf<string>, { jobs: ShardLeaf<JobState> | null | undefined; earliest: number | null }>();

  /** `of`: a job's deadline, or null without one. */
  constructor(private readonly of: (job: JobState) => number | null) {}

  /** The earliest deadline of the jobs `ids` names, or null. */
  earliest(ids: Sharded<string>, jobs: Sharded<JobState>): number | null {
    let earliest: number | null = null;
    for (const [shard, leaf] of shardLeaves(ids)) {
      const d = this.leafEarliest(leaf, shardLeaf(jobs, shard));
      if (d !== null && (earliest === null || d < earliest)) earliest = d;
    }
    return earliest;
  }

  /** The jobs `ids` names whose deadline is due at `at`, by id. */
  due(ids: Sharded<string>, jobs: Sharded<JobState>, at: number): JobState[] {
    const out: JobState[] = [];
    for (const [shard, leaf] of shardLeaves(ids)) {
      const jobsLeaf = shardLeaf(jobs, shard);
      const d = this.leafEarliest(leaf, jobsLeaf);
      if (d === null || d > at) continue;
      for (const id of leaf) {
        const job = leafGet(jobsLeaf, id);
        const deadline = job === undefined ? null : this.of(job);
        if (deadline !== null && deadline <= at) out.push(job!);
      }
    }
    return out.sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0));
  }

  private leafEarliest(ids: ShardLeaf<string>, jobs: ShardLeaf<JobState> | null | undefined): number | null {
    const cached = this.memo.get(ids);
    if (cached !== undefined && cached.jobs === jobs) return cached.earliest;
    let earliest: number | null = null;
    for (const id of ids) {
      const job = leafGet(jobs, id);
      const d = job === undefined ? null : this.of(job);
      if (d !== null && (earliest === null || d < earliest)) earliest = d;
    }
    // a leaf that can still change in place (a draft's or a bulk replay's copy) is never memoised
    if (Object.isFrozen(ids) && (jobs === undefined || jobs === null || Object.isFrozen(jobs))) this.memo.set(ids, { jobs, earliest });
    return earliest;
  }
}
