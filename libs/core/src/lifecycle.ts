import type { AbortReason, AllocationReleased, ReleaseCause, ReservationCleared, SchedulerEvent } from './events.ts';
import { activeRequest } from './jobRequests.ts';
import { scaleResources } from './resources.ts';
import { shardGet } from './shard.ts';
import type { JobState, State } from './state.ts';

// Lifecycle decisions taken outside sessions (cancel, close, completion, node loss). Each returns
// the events that follow from one fact; the caller emits them in the same transaction as the fact.

/** Per-member resources of a role of the request in force (a running gang's variant), as debited on a host. */
export function memberResources(job: JobState, roleName: string): { cpu: number; memoryMb: number; slots: number; gpus: number } {
  const role = activeRequest(job).roles.find((r) => r.name === roleName);
  const r = role?.resources;
  return { cpu: r?.cpu ?? 0, memoryMb: r?.memoryMb ?? 0, slots: 1, gpus: r?.gpus ?? 0 };
}

/**
 * Releases of every member of a job that still holds resources (or only of those in `only`: an
 * elastic gang shrinking), one event per (node, role), in allocation order so replay and
 * re-derivation agree.
 */
export function releaseAll(job: JobState, cause: ReleaseCause, only: ReadonlySet<number> | null = null): AllocationReleased[] {
  const out: AllocationReleased[] = [];
  for (const a of job.allocations) {
    const members = a.members.filter((m) => {
      const member = job.members[m];
      return member !== null && member !== undefined && !member.released && (only === null || only.has(m));
    });
    if (members.length === 0) continue;
    const gpuIds = members.flatMap((m) => job.members[m]?.gpuIds ?? []);
    out.push({
      type: 'AllocationReleased',
      jobId: job.spec.id,
      node: a.node,
      role: a.role,
      members,
      resources: scaleResources(memberResources(job, a.role), members.length),
      gpuIds,
      cause,
    });
  }
  return out;
}

/** The release of one finished member. */
export function releaseMember(job: JobState, member: number, cause: ReleaseCause): AllocationReleased | null {
  const m = job.members[member];
  if (m === null || m === undefined || m.released) return null;
  return {
    type: 'AllocationReleased',
    jobId: job.spec.id,
    node: m.node,
    role: m.role,
    members: [member],
    resources: memberResources(job, m.role),
    gpuIds: [...m.gpuIds],
    cause,
  };
}

/** The end of a job's reservation, if it has one (a `ReservationCleared`), as events to emit. */
export function reservationCleared(job: JobState, session: number, reason: ReservationCleared['reason']): ReservationCleared[] {
  return job.reservation === undefined ? [] : [{ type: 'ReservationCleared', jobId: job.spec.id, session, reason }];
}

/** Cancels a pending or running job: releases what it holds and records a final decision. */
export function cancelJob(state: State, job: JobState, at: number): SchedulerEvent[] {
  const reason: AbortReason = { category: 'cancelled', message: `job ${job.spec.id} was cancelled`, hosts: {} };
  return [
    ...releaseAll(job, 'cancelled'),
    ...reservationCleared(job, state.session, 'cancelled'),
    { type: 'GangAborted', jobId: job.spec.id, session: state.session, at, final: true, reason },
  ];
}

/**
 * The consequences of losing a node: every gang with a member on it is released as a unit (on
 * all its hosts), aborted with `node-lost`, and requeued. Jobs are handled in id order.
 */
export function loseNode(state: State, nodeId: string, at: number): SchedulerEvent[] {
  const node = shardGet(state.nodes, nodeId);
  if (node === undefined) return [];
  const out: SchedulerEvent[] = [];
  for (const jobId of Object.keys(node.jobs).sort()) {
    const job = shardGet(state.jobs, jobId);
    if (job === undefined || job.status !== 'running') continue;
    const reason: AbortReason = {
      category: 'node-lost',
      message: `node ${nodeId} was lost under job ${jobId}; the whole gang is released and requeued`,
      hosts: { 'node-lost': 1 },
    };
    out.push(...releaseAll(job, 'node-lost'));
    out.push({ type: 'GangAborted', jobId, session: state.session, at, final: false, reason });
    out.push({ type: 'JobPended', jobId, at });
  }
  return out;
}
