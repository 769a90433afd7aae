import type { AbortReason, Allocation, Explanation, JobSpec } from '@muster/core';

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
  /** Nodes the gang holds (or held), sorted. */
  nodes: string[];
  /** The latest pend reason category, or why it ended; null when none. */
  reason: string | null;
  /** Position in submission order. */
  submitIndex: number;
}

/** The answer of `muster.api.job.get`: the summary plus the normalised spec, what it holds and why it waits. */
export interface JobDetails extends JobSummary {
  spec: JobSpec;
  allocations: Allocation[];
  pendReason: AbortReason | null;
}

/** The answer of `muster.api.job.get` for a finished job the scheduler retired from its state. */
export interface RetiredJobDetails {
  id: string;
  /** How it ended: `succeeded`, `failed`, `closed`, `cancelled` or `timedout`. */
  status: string;
  /** Stamped time it ended. */
  finishedAt: number;
  retired: true;
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

/** The answer of `muster.api.explain` (the core's `Explanation`): why a job is where it is, in words and host counts. */
export type { Explanation };

/** The answer to an accepted submission: the job id and its sequence in MUSTER_IN. */
export interface Submitted {
  jobId: string;
  inputSeq: number;
}
