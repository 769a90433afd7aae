import type { AbortReason, Allocation } from '@muster/core';

/** Used and total amount of one resource of a node. */
export interface UsedTotal {
  used: number;
  total: number;
}

/** One row of `muster.api.jobs.list`: a job as the scheduler's folded state has it. */
export interface JobSummary {
  id: string;
  /** `pending`, `running`, `succeeded`, `failed`, `closed`, `cancelled` or `timedout`. */
  status: string;
  user: string;
  queue: string;
  priority: number;
  /** Gang size. */
  members: number;
  /** Nodes the gang holds (empty unless running). */
  nodes: string[];
  /** The latest pend reason category, or why it ended; null when none. */
  reason: string | null;
}

/** The answer of `muster.api.job.get`: the summary plus what the job holds and why it waits. */
export interface JobDetails extends JobSummary {
  allocations?: Allocation[];
  pendReason?: AbortReason | null;
}

/** One row of `muster.api.nodes.list`. */
export interface NodeSummary {
  id: string;
  /** `up`, `drained` or `lost`. */
  status: string;
  cpu: UsedTotal;
  memoryMb: UsedTotal;
  gpus: UsedTotal;
  /** Slots in use and the limit (null total: no limit). */
  slots: { used: number; total: number | null };
  labels: Record<string, string | number>;
  /** Ids of the jobs with members on the node. */
  jobs: string[];
}

/** The answer of `muster.api.explain`: why a job is where it is, in words and host counts. */
export interface Explanation {
  jobId: string;
  status: string;
  /** One or more sentences for a person. */
  message: string;
  /** The recorded reason (category, host counts per host-level reason), when it waits or was aborted. */
  reason: AbortReason | null;
}

/** The answer to an accepted submission: the job id and its sequence in MUSTER_IN. */
export interface Submitted {
  jobId: string;
  inputSeq: number;
}
