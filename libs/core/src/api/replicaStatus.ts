// The wire type of `muster.replica.<id>.status` (DESIGN.md §2): what a scheduler replica answers
// about where it is in the log, read by drills, tests and operators to compare replicas.

/** What `muster.replica.<id>.status` answers: where this replica is in the log (same seq must mean same hash). */
export interface ReplicaStatus {
  id: string;
  /** 'starting' (rebuilding: it answers, but neither stands by nor leads yet), 'standby', 'leader' or 'stopped'. */
  role: string;
  seq: number;
  term: number;
  lastInputSeq: number;
  stateHash: string;
  refusedBecause: string | null;
}
