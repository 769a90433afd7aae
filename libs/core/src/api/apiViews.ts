// The wire types of the scheduler's request/reply API (`muster.api.*`, DESIGN.md §2): what the
// scheduler answers (services/scheduler) and what the client reads (libs/client), defined once.
// Plain types: nothing here runs.
import type { AbortReason, Allocation, AllocationResources } from '../events.ts';
import type { JobSpec, QueueResources } from '../contract/types.ts';
import type { JobStatus, LastFailure, NodeStatus } from '../state.ts';

/** Used and total amount of one resource of a node. */
export interface UsedTotal {
  used: number;
  total: number;
}

/** One row of `muster.api.jobs.list` (and of `muster jobs`): a job as the scheduler's folded state has it. */
export interface JobSummary {
  id: string;
  status: JobStatus;
  user: string;
  queue: string;
  priority: number;
  /** Gang size (a job with alternatives: the committed variant's while it runs; its first variant's while pending). */
  members: number;
  /**
   * Members the gang holds now (DESIGN.md §13): bound and not given up. An elastic gang runs with
   * `minSize` ≤ `size` ≤ `count`; a plain running gang has `size` = `count`; 0 while pending.
   */
  size: number;
  /** The full gang size (`members`, under the name that pairs with `size`). */
  count: number;
  /** An elastic job's smallest size (every role's `minCount` summed); absent for a job without an elastic role. */
  minSize?: number;
  /** The committed variant of a job with alternatives (DESIGN.md §13); absent for any other job and while pending. */
  alternative?: number;
  /** Nodes the gang holds (or held), sorted. */
  nodes: string[];
  /** The latest pend reason category, or why it ended; null when none. */
  reason: string | null;
  /** Position in submission order. */
  submitIndex: number;
  /** A reserved job's expected start (stamped time, DESIGN.md §11); null when it has no reservation. */
  expectedStart: number | null;
  /** The attempt the job is on (DESIGN.md §15): 0, then 1, 2, … after restarts. */
  attempt: number;
  /** The last failure of a member of its gang (contract v1.2); absent when none. */
  lastFailure?: LastFailure;
  /** While it waits out a restart's backoff: the stamped time before which it is not placed. */
  notBefore?: number;
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
  status: JobStatus;
  /** Stamped time it ended. */
  finishedAt: number;
  retired: true;
}

/** One row of `muster.api.nodes.list` (and of `muster nodes`). */
export interface NodeSummary {
  id: string;
  status: NodeStatus;
  cpu: UsedTotal;
  memoryMb: UsedTotal;
  gpus: UsedTotal;
  /** Slots in use and the limit (null total: no limit). */
  slots: { used: number; total: number | null };
  labels: Record<string, string | number>;
  /** Ids of the jobs with members on the node. */
  jobs: string[];
  /** Each GPU device of the node and the job whose member holds it (null: free). */
  gpuDevices: GpuDeviceUse[];
}

/** One GPU device of a node and who holds it (`muster.api.nodes.list`, the dashboard's cluster view). */
export interface GpuDeviceUse {
  id: number;
  model: string;
  memoryMb: number;
  nvlinkDomain: number;
  /** The job whose member holds the device, or null when it is free. */
  jobId: string | null;
}

/** The answer to an accepted submission: the job id and its sequence in MUSTER_IN. */
export interface Submitted {
  jobId: string;
  inputSeq: number;
}

/** One row of `muster.api.queues.list` (and of `muster queues`). */
export interface QueueView {
  name: string;
  /** Null: a root queue. */
  parent: string | null;
  leaf: boolean;
  weight: number;
  guaranteed: QueueResources;
  max: QueueResources;
  /** What the queue and its children hold now. */
  used: AllocationResources;
  /** Use above the guarantee (DESIGN.md §12). */
  borrowed: AllocationResources;
  /** Pending and running jobs scheduled in the queue and its children. */
  pending: number;
  running: number;
  /** The implicit `default` queue, not defined by an operator. */
  implicit: boolean;
}
