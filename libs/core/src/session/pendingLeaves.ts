import type { JobState } from '../state.ts';

/** What a session learnt of one frozen part of the pending table (a level or a leaf), with the part of the jobs table it read beside it. */
export interface PendingLeaf {
  /** The part of the jobs table the records were read from (the same object: the same job records). */
  jobs: object;
  /** Whether a policy was in force (it decides which jobs are planned). */
  policy: boolean;
  /** Pending jobs tried in every session under a policy (reserved, or held back by a reservation), their records in shard order. */
  planned: JobState[];
  /** Pending jobs not planned: tried when new since the last session, or when capacity could have grown. */
  unplanned: number;
  /** The latest state epoch at which one of the unplanned jobs became pending (-1: none). */
  newest: number;
  /** Pending jobs with a reservation. */
  reserved: number;
}

/**
 * The pending table by part (a level or a leaf), as the sessions of one turn context last read
 * it (issue 32: a session's cost follows what changed): a part that is the same frozen object,
 * beside the same part of the jobs table, holds the same pending jobs with the same records, so
 * a session that tries only what is new or planned need not read its jobs again, nor look into
 * a level nothing under which changed. Kept by the turn context, never in the state.
 */
export class PendingLeaves {
  private readonly leaves = new WeakMap<object, PendingLeaf>();

  /** What was learnt of `pending` beside `jobs` under a policy or none, if it still holds. */
  get(pending: object, jobs: object, policy: boolean): PendingLeaf | undefined {
    const known = this.leaves.get(pending);
    return known !== undefined && known.jobs === jobs && known.policy === policy ? known : undefined;
  }

  /** Records what a session learnt of a part (only frozen parts: a draft's may still change in place). */
  set(pending: object, leaf: PendingLeaf): void {
    if (Object.isFrozen(pending) && Object.isFrozen(leaf.jobs)) this.leaves.set(pending, leaf);
  }
}
