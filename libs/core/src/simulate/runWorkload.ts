import { jobRequests } from '../jobRequests.ts';
import { shardGet } from '../shard.ts';
import { CompletionQueue } from './completionQueue.ts';
import type { Completion } from './completionQueue.ts';
import { distribution } from './distribution.ts';
import { sizeCounts } from './sizeClasses.ts';
import type { Simulation } from './simulation.ts';
import { UsageMeter } from './usageMeter.ts';
import type { Utilisation } from './usageMeter.ts';
import type { WorkloadEntry, WorkloadFailure, WorkloadScenario } from './workloadScenario.ts';
import { subjects } from '../wire/subjects.ts';

/** Bounded slowdown's floor on the run time (DESIGN.md §11): (wait + run) / max(run, 10 s). */
const SLOWDOWN_FLOOR_MS = 10_000;

/** What a workload run knows of one accepted job beyond the state: how long its members run, the failures to play, and its first commit. */
interface JobTrack {
  runMs: number;
  fail: WorkloadFailure | undefined;
  startedAt: number | null;
}

/**
 * Runs a workload (DESIGN.md §11, "What-if on a workload") on a started simulation whose policy and
 * nodes are in: time jumps from instant to instant (arrivals, members finishing `runMs` after their
 * gang's commit or a member failing as the arrival's `fail` says, and the core's next deadline: a
 * timeout, a runtime limit or a restart's backoff ending); at each, the members
 * due report done from their nodes (and a kept-warm gang is closed), then the arrivals are submitted, then one session runs, all
 * through the core's turn. It stops at `until`, or when nothing is left to happen. Prints
 * decisions, one JobStats per accepted job, and the Summary; returns the simulation's `lines`.
 */
export function runWorkload(sim: Simulation, scenario: WorkloadScenario): string[] {
  const tracks = new Map<string, JobTrack>();
  const completions = new CompletionQueue();
  const meter = new UsageMeter((nodeId) => shardGet(sim.state.nodes, nodeId)?.spec.capacity.slots !== undefined);
  let arriving: WorkloadEntry | null = null;
  sim.onEvent = (event) => {
    if (event.type === 'JobSubmitted') {
      if (arriving !== null) tracks.set(event.job.id, { runMs: arriving.runMs, fail: arriving.fail, startedAt: null });
    } else if (event.type === 'GangCommitted') {
      meter.commit(event);
      const track = tracks.get(event.jobId);
      if (track === undefined) return;
      track.startedAt ??= event.at;
      // an attempt the workload fails (contract v1.2): one member exits before the gang's end (an
      // ignored failure leaves the rest to finish then; a stopped gang's end makes no instant)
      const attempt = event.attempt ?? 0;
      const fail = track.fail;
      if (fail !== undefined && attempt < fail.attempts && fail.afterMs < track.runMs) {
        completions.push(event.at + fail.afterMs, event.jobId, event.session, { member: fail.member, exitCode: fail.exitCode, attempt });
      }
      completions.push(event.at + track.runMs, event.jobId, event.session);
    } else if (event.type === 'GangResized') {
      // a grown gang's added members finish with the rest, at the job's end (Simulation.complete)
      meter.resize(event);
    } else if (event.type === 'AllocationReleased') {
      meter.release(event);
    }
  };

  const runs = (c: Completion): boolean => {
    const job = shardGet(sim.state.jobs, c.jobId);
    return job !== undefined && job.status === 'running' && job.session === c.session;
  };
  const entries = scenario.workload;
  const until = scenario.until;
  let next = 0;
  let cut = false;
  for (;;) {
    let t: number | null = next < entries.length ? entries[next]!.at : null;
    // a gang stopped (at its limit) before its members were due makes no instant
    let first = completions.first();
    while (first !== null && !runs(first)) {
      completions.pop();
      first = completions.first();
    }
    if (first !== null && (t === null || first.at < t)) t = first.at;
    // a deadline at or before now was the last session's to handle
    const deadline = sim.nextDeadline();
    if (deadline !== null && deadline > sim.now && (t === null || deadline < t)) t = deadline;
    if (t === null) break;
    if (until !== undefined && t > until) {
      cut = true;
      break;
    }
    meter.advance(t, sim.state.capacity);
    sim.now = t;
    // members that finish at an instant finish before its session checks the limits
    for (const c of completions.takeUntil(t)) {
      if (!runs(c)) continue;
      if (c.fail !== undefined) {
        sim.done({ jobId: c.jobId, member: c.fail.member, ok: false, exitCode: c.fail.exitCode, attempt: c.fail.attempt });
        continue;
      }
      sim.complete(c.jobId);
      // a kept-warm gang holds its hosts until closed: its run time is how long it holds them
      if (shardGet(sim.state.jobs, c.jobId)!.spec.minInstances > 0) sim.input(subjects.close, { jobId: c.jobId });
    }
    while (next < entries.length && entries[next]!.at === t) {
      const entry = entries[next++]!;
      arriving = entry;
      sim.input(subjects.submit, entry.submit);
      arriving = null;
    }
    sim.schedule();
  }
  const end = cut && until !== undefined ? until : sim.now;
  meter.advance(end, sim.state.capacity);
  sim.now = end;
  sim.onEvent = null;
  jobStats(sim, tracks, end, meter.utilisation());
  return sim.lines;
}

/** Prints one JobStats line per accepted job, in submission order, then the Summary with the run's figures and the job count by size class (the first request's members). */
function jobStats(sim: Simulation, tracks: ReadonlyMap<string, JobTrack>, end: number, utilisation: Utilisation): void {
  const waits: number[] = [];
  const slowdowns: number[] = [];
  const sizes: number[] = [];
  for (const [jobId, track] of tracks) {
    // no workload retires a job: every accepted one is in the state
    const job = shardGet(sim.state.jobs, jobId)!;
    sizes.push(jobRequests(job.spec)[0]!.roles.reduce((n, role) => n + role.count, 0));
    const started = track.startedAt;
    const endedAt = started === null ? null : job.finishedAt;
    const waitMs = started === null ? null : started - job.submittedAt;
    // a job restarted (contract v1.2) says how many attempts it took
    const attempts = (job.attempt ?? 0) > 0 ? { attempts: job.attempt! + 1 } : {};
    sim.print(JSON.stringify({ type: 'JobStats', jobId, submittedAt: job.submittedAt, startedAt: started, endedAt, waitMs, outcome: job.status, ...attempts }));
    if (started === null || waitMs === null) continue;
    // a gang still running at the end has run until then
    const run = (endedAt ?? end) - started;
    waits.push(waitMs);
    slowdowns.push((waitMs + run) / Math.max(run, SLOWDOWN_FLOOR_MS));
  }
  sim.print(JSON.stringify(sim.summary({ wait: distribution(waits), slowdown: distribution(slowdowns), utilisation, sizes: sizeCounts(sizes) })));
}
