import type { AllocatorCounters } from '../placement/allocateGang.ts';

/** What a session did, for tests and the benchmark (not written anywhere). */
export interface SessionStats extends AllocatorCounters {
  /** Jobs whose deadline was due (aborted with final: true). */
  timedOut: number;
  /** Running gangs stopped at their runtime limit. */
  limitsStopped: number;
  /** Blocked jobs given a reservation. */
  reserved: number;
  /** Reservation plans kept from an earlier session whose inputs stood (not made again). */
  plansKept: number;
  /** Attempts that would have fitted but for a reservation (category `reserved`). */
  backfillRefused: number;
  /** Attempts refused by a queue's max (category `quota`). */
  quotaRefused: number;
  /** Commits that stopped running gangs (DESIGN.md §12), and the gangs they stopped. */
  preemptions: number;
  preempted: number;
  /** Elastic gangs grown, and shrunk by preemption instead of being stopped (DESIGN.md §13). */
  grown: number;
  shrunk: number;
  /** Pending jobs tried this session. */
  attempted: number;
  /** Pending jobs not tried: nothing they could use changed since their last attempt. */
  notRetried: number;
  /** Pending jobs passed over in order: their attempt would have been served from the cache and written nothing. */
  passedOver: number;
  /** Attempts that ran the allocator. */
  allocatorRuns: number;
  /** Attempts pended from the unsatisfiable cache without running the allocator. */
  cacheHits: number;
  committed: number;
  failed: number;
  /** Failed attempts that wrote a GangAborted (the pend reason's category changed). */
  abortsWritten: number;
  membersPlaced: number;
  events: number;
  /** Host-index tree nodes and leaves opened by host searches. */
  nodeVisits: number;
  leafVisits: number;
}

/** A session's stats before it has done anything. */
export function emptyStats(): SessionStats {
  // written out: a spread into a literal this size is several times slower to build
  return {
    plansTried: 0, plansSkipped: 0, hostSearches: 0, timedOut: 0, limitsStopped: 0, reserved: 0, plansKept: 0, backfillRefused: 0, quotaRefused: 0, preemptions: 0, preempted: 0, grown: 0, shrunk: 0, attempted: 0, notRetried: 0, passedOver: 0, allocatorRuns: 0, cacheHits: 0, committed: 0,
    failed: 0, abortsWritten: 0, membersPlaced: 0, events: 0, nodeVisits: 0, leafVisits: 0,
  };
}
