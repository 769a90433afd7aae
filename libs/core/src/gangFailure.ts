import type { GangRestarting, JobFinished, SchedulerEvent } from './events.ts';
import type { FailurePolicy } from './contract/types.ts';
import { releaseAll, releaseMember } from './lifecycle.ts';
import type { JobState } from './state.ts';

/** How a member ended, as its node reported it (`muster.in.node.<id>.done`, contract v1.2). */
export interface MemberExit {
  member: number;
  node: string;
  exitCode?: number;
  signal?: string;
}

/**
 * What a job's failure policy does with a failing member (DESIGN.md §15): the first rule naming
 * its exit code, else a restart; a restart with none left is a failure. No policy: no restart.
 */
function failureAction(policy: FailurePolicy | undefined, exitCode: number | undefined, restarts: number): 'restart' | 'fail' | 'ignore' {
  const rule = exitCode === undefined ? undefined : policy?.rules.find((r) => r.onExitCodes.includes(exitCode));
  const action = rule?.action ?? 'restart';
  return action === 'restart' && restarts >= (policy?.maxRestarts ?? 0) ? 'fail' : action;
}

/**
 * The events that follow a member's failure in a running gang committed under contract v1.2, in
 * the transaction that ingests the report: every other member released (cause `member-failed`,
 * so its agent stops it) and the failed member's own release, then `GangRestarting` or a failed
 * `JobFinished`; or null when the policy ignores the failure (the member just completes).
 */
export function gangFailure(job: JobState, exit: MemberExit, at: number): SchedulerEvent[] | null {
  const policy = job.spec.failurePolicy;
  const action = failureAction(policy, exit.exitCode, job.restarts ?? 0);
  if (action === 'ignore') return null;
  const others = new Set<number>();
  job.members.forEach((m, i) => {
    if (m !== null && i !== exit.member) others.add(i);
  });
  const events: SchedulerEvent[] = [...releaseAll(job, 'member-failed', others)];
  const own = releaseMember(job, exit.member, 'completed');
  if (own !== null) events.push(own);
  const attempt = job.attempt ?? 0;
  const how = exitOf(exit);
  if (action === 'restart') {
    const restart: GangRestarting = {
      type: 'GangRestarting', jobId: job.spec.id, at, member: exit.member, node: exit.node, ...how, attempt: attempt + 1, notBefore: at + (policy?.backoffMs ?? 0),
    };
    events.push(restart);
  } else {
    const failed: JobFinished = { type: 'JobFinished', jobId: job.spec.id, at, outcome: 'failed', member: exit.member, node: exit.node, ...how, attempts: attempt + 1 };
    events.push(failed);
  }
  return events;
}

/** The exit code and signal of a member's end, each only when given. */
export function exitOf(exit: { exitCode?: number; signal?: string }): { exitCode?: number; signal?: string } {
  return {
    ...(exit.exitCode === undefined ? {} : { exitCode: exit.exitCode }),
    ...(exit.signal === undefined ? {} : { signal: exit.signal }),
  };
}
