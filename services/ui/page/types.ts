// The shapes the page reads from the dashboard's JSON API (the scheduler's API views,
// libs/core/src/api/apiViews.ts, and the dashboard's own): type-only, erased when compiled.

/** Used and total of one resource. */
export interface UsedTotal { used: number; total: number | null }

/** A GPU device and the job holding it. */
export interface GpuDeviceUse { id: number; model: string; memoryMb: number; nvlinkDomain: number; jobId: string | null }

/** A node row of `/api/nodes`. */
export interface NodeRow {
  id: string; status: string; cpu: UsedTotal; memoryMb: UsedTotal; gpus: UsedTotal; slots: UsedTotal;
  labels: Record<string, string | number>; jobs: string[]; gpuDevices?: GpuDeviceUse[];
}

/** A job row of `/api/jobs`. */
export interface JobRow {
  id: string; status: string; user: string; queue: string; priority: number; members: number;
  nodes: string[]; reason: string | null; submitIndex: number; expectedStart?: number | null;
  /** Members held now, the full size and (elastic jobs only, DESIGN.md §13) the smallest size. */
  size?: number; count?: number; minSize?: number;
  /** The gang's attempt (0, then 1, 2, … after restarts) and its last failing member (DESIGN.md §15). */
  attempt?: number; lastFailure?: { member: number; node: string; exitCode?: number; signal?: string; at: number };
}

/** One line of a member's output (the SDK's OutputLine). */
export interface OutputLineRow { node: string; member: number; attempt: number; stream: 'stdout' | 'stderr'; line: string }

/** An amount per resource a queue names (guarantee or max); a resource left out is not named. */
export interface QueueResources { cpu?: number; memoryMb?: number; gpus?: number }

/** A queue row of `/api/queues` (the scheduler's `muster.api.queues.list`). */
export interface QueueRow {
  name: string; parent: string | null; leaf: boolean; weight: number;
  guaranteed: QueueResources; max: QueueResources;
  used: { cpu: number; memoryMb: number; gpus: number }; borrowed: { cpu: number; memoryMb: number; gpus: number };
  pending: number; running: number; implicit: boolean;
}

/** A replica of `/api/replicas`. */
export interface ReplicaRow { id: string; role: string; term: number; seq: number; lag: number | null; refusedBecause: string | null }

/** A log event as the page reads it. */
export type LogEvent = { type: string } & Record<string, unknown>;

/** A decision of the live feed. */
export interface FeedItem { seq: number; at: number; event: LogEvent }

/** `/api/jobs/<id>`: the job, why it is where it is, and its story from the log. */
export interface JobPage {
  job: (JobRow & { allocations?: { node: string; role: string; members: number[]; gpuIds: number[] }[]; pendReason?: { category: string; message: string } | null; retired?: boolean }) | null;
  explanation: { text: string; reservation?: { startAt: number; hosts: string[]; waitsFor: { jobId: string; endsAt: number }[] } } | null;
  story: { events: { seq: number; index: number; at: number; event: LogEvent }[]; dropped: number; fromSeq: number } | null;
  /** The tail of its members' output (each member's latest batch), null when MUSTER_OUTPUT cannot be read. */
  output?: { lines: OutputLineRow[] } | null;
}
