import type { PartMemo } from '../shardDiff.ts';
import type { JobState } from '../state.ts';

/** What a session learnt of one frozen part of the pending table (a level or a leaf), read beside the part of the jobs table at its place. */
export interface PendingLeaf {
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
export type PendingLeaves = PartMemo<PendingLeaf>;
