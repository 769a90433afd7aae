// Retiring finished jobs: a long-running scheduler would otherwise keep every job it ever ran in
// its state (memory, snapshot size, rebuild time grow without end). The leader decides when
// (JobsRetired, from its retention setting and stamped time); these rules say what is allowed, for
// the fold, the leader and the auditor alike.
import type { JobsRetired } from './events.ts';
import { shardGet, shardLeaves } from './shard.ts';
import type { JobState, RetiredJob, State } from './state.ts';

/** Job statuses after which a job takes nothing and holds nothing. */
const FINISHED: ReadonlySet<JobState['status']> = new Set(['succeeded', 'failed', 'closed', 'cancelled', 'timedout']);

/** Why job `jobId` may not be retired at stamped time `at` under `retainMs`, or null when it may. */
export function retireProblem(state: State, jobId: string, at: number, retainMs: number): string | null {
  const job = shardGet(state.jobs, jobId);
  return job === undefined ? `job ${jobId} is not in the state` : jobRetireProblem(state, job, at, retainMs);
}

/** `retireProblem` for a job already looked up. */
export function jobRetireProblem(state: State, job: JobState, at: number, retainMs: number): string | null {
  const jobId = job.spec.id;
  if (!FINISHED.has(job.status) || job.finishedAt === null) return `job ${jobId} is ${job.status}, not finished`;
  if (job.finishedAt > at - retainMs) return `job ${jobId} finished at ${job.finishedAt}, less than ${retainMs} ms before ${at}`;
  for (const a of job.allocations) {
    const node = shardGet(state.nodes, a.node);
    if (node !== undefined && typeof node.jobs[jobId] === 'number') return `job ${jobId} still holds members on ${a.node}`;
  }
  return null;
}

/**
 * The finished jobs due for retirement at `at`: finished at least `retainMs` before it and holding
 * nothing, earliest finish first (then id), at most `limit`. Scans every job: call it now and then.
 */
function retirementDue(state: State, at: number, retainMs: number, limit: number): string[] {
  const due: JobState[] = [];
  for (const [, leaf] of shardLeaves(state.jobs)) {
    for (const job of leaf) {
      if (job.finishedAt !== null && job.finishedAt <= at - retainMs && jobRetireProblem(state, job, at, retainMs) === null) due.push(job);
    }
  }
  due.sort((a, b) => (a.finishedAt as number) - (b.finishedAt as number) || (a.spec.id < b.spec.id ? -1 : 1));
  return due.slice(0, limit).map((job) => job.spec.id);
}

/** The JobsRetired event for what is due at `at`, or null when nothing is. */
export function retirement(state: State, at: number, retainMs: number, limit: number): JobsRetired | null {
  const jobIds = retirementDue(state, at, retainMs, limit);
  return jobIds.length === 0 ? null : { type: 'JobsRetired', at, retainMs, jobIds };
}

/** What is kept of a retired job (its id, outcome and end), or undefined when it was not retired. */
export function retiredJob(state: State, jobId: string): RetiredJob | undefined {
  return state.retired === undefined ? undefined : shardGet(state.retired, jobId);
}

/** Whether a job id was retired (it is still known: a resubmission is a duplicate). */
export function isRetired(state: State, jobId: string): boolean {
  return retiredJob(state, jobId) !== undefined;
}

/** Whether a job id was ever accepted, whether the job is still held or was retired. */
export function isJobIdTaken(state: State, jobId: string): boolean {
  return shardGet(state.jobs, jobId) !== undefined || isRetired(state, jobId);
}
