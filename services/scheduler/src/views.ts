import { activeRequest, requestSize, shardEntriesSorted, shardGet } from '@muster/core';
import type { JobState, JobSummary, NodeState, NodeSummary, State } from '@muster/core';

// The rows the API answers with; their types (the wire types) are @muster/core's, shared with the client.

/** A job as a row. */
export function jobRow(job: JobState): JobSummary {
  // a job with alternatives has no size until a variant commits: show its first variant's
  const request = job.spec.alternatives === undefined || job.alternative !== undefined ? activeRequest(job) : job.spec.alternatives[0]!;
  const count = job.spec.alternatives === undefined || job.alternative !== undefined ? job.members.length : requestSize(request);
  // an elastic gang (DESIGN.md §13) runs between its roles' minimums and its full size
  const minSize = request.roles.some((r) => r.minCount !== undefined) ? request.roles.reduce((n, r) => n + (r.minCount ?? r.count), 0) : undefined;
  return {
    id: job.spec.id,
    status: job.status,
    user: job.spec.identity.user,
    queue: job.spec.identity.queue,
    priority: job.spec.priority,
    members: count,
    size: job.members.reduce((n, m) => (m === null ? n : n + 1), 0),
    count,
    ...(minSize === undefined ? {} : { minSize }),
    ...(job.alternative === undefined ? {} : { alternative: job.alternative }),
    nodes: [...new Set(job.allocations.map((a) => a.node))].sort(),
    reason: job.pendReason === null ? null : job.pendReason.category,
    submitIndex: job.submitIndex,
    expectedStart: job.reservation?.startAt ?? null,
    attempt: job.attempt ?? 0,
    ...(job.lastFailure === undefined ? {} : { lastFailure: job.lastFailure }),
    ...(job.notBefore === undefined ? {} : { notBefore: job.notBefore }),
  };
}

/** A node as a row; `state` (when given) names the job holding each GPU device. */
export function nodeRow(node: NodeState, state?: State): NodeSummary {
  const { spec, used } = node;
  const holders = new Map<number, string>();
  if (state !== undefined) {
    for (const jobId of Object.keys(node.jobs)) {
      for (const a of shardGet(state.jobs, jobId)?.allocations ?? []) if (a.node === spec.id) for (const gpu of a.gpuIds) holders.set(gpu, jobId);
    }
  }
  return {
    id: spec.id,
    status: node.status,
    cpu: { used: used.cpu, total: spec.capacity.cpu },
    memoryMb: { used: used.memoryMb, total: spec.capacity.memoryMb },
    gpus: { used: node.gpusUsed.length, total: spec.gpus.length },
    slots: { used: used.slots, total: spec.capacity.slots ?? null },
    labels: spec.labels,
    jobs: Object.keys(node.jobs).sort(),
    gpuDevices: spec.gpus.map((g) => ({ id: g.id, model: g.model, memoryMb: g.memoryMb, nvlinkDomain: g.nvlinkDomain, jobId: holders.get(g.id) ?? null })),
  };
}

/** Jobs in submission order, optionally of one status. */
export function listJobs(state: State, status?: string, limit = 10_000): JobSummary[] {
  const rows = shardEntriesSorted(state.jobs)
    .map(([, job]) => job)
    .filter((job) => status === undefined || job.status === status)
    .sort((a, b) => a.submitIndex - b.submitIndex)
    .slice(0, limit);
  return rows.map(jobRow);
}

/** Nodes in id order. */
export function listNodes(state: State): NodeSummary[] {
  return shardEntriesSorted(state.nodes).map(([, node]) => nodeRow(node, state));
}
