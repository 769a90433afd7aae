import type { NodeSpec, PolicySpec, JobSpec, QueueSpec } from '../contract/types.ts';
import type { LoggedTransaction } from '../envelope.ts';
import type { WorkloadEntry, WorkloadScenario } from './workloadScenario.ts';

/** What the log says of one submitted job. */
interface Seen {
  spec: JobSpec;
  submittedAt: number;
  /** The stamp of the gang's latest commit, while it runs or after its run ended. */
  committedAt: number | null;
  /** When that run ended (its last member's completion, or its stop), or null while it runs. */
  endedAt: number | null;
}

/** A workload taken from a log, and what could not be taken from it as it was. */
export interface RecordedWorkload {
  scenario: WorkloadScenario;
  /** One line per job left out or given a run time the log did not observe. */
  notes: string[];
}

/**
 * Takes a workload from a live log, one transaction at a time (DESIGN.md §11, `muster simulate
 * --from-log`): every node registered (its latest spec) as the nodes present from the start; every
 * JobSubmitted as an arrival at its stamped time, times counted from the first arrival; as its run
 * time, what was observed of its gang's last run, from commit to its last member's completion (or
 * its stop); a job whose run did not end in the log takes its `runtimeMs` hint, or is left out and
 * noted. The policy and the queues are the ones in force at the log's end (the queues parents first).
 */
export class WorkloadRecorder {
  private readonly nodes = new Map<string, NodeSpec>();
  private readonly jobs = new Map<string, Seen>();
  private policy: PolicySpec | undefined;
  private readonly queues = new Map<string, QueueSpec>();

  /** Reads one transaction, in log order. */
  add({ tx }: LoggedTransaction): void {
    for (const event of tx.events) {
      switch (event.type) {
        case 'NodeRegistered':
          this.nodes.set(event.node.id, event.node);
          break;
        case 'PolicySet':
          this.policy = { ...this.policy, ...event.policy };
          break;
        case 'QueueSet':
          this.queues.set(event.queue.name, event.queue);
          break;
        case 'JobSubmitted':
          this.jobs.set(event.job.id, { spec: event.job, submittedAt: tx.at, committedAt: null, endedAt: null });
          break;
        case 'GangCommitted': {
          const seen = this.jobs.get(event.jobId);
          if (seen !== undefined) {
            seen.committedAt = event.at;
            seen.endedAt = null;
          }
          break;
        }
        case 'JobFinished':
          this.ended(event.jobId, event.at);
          break;
        case 'GangAborted':
          // a gang requeued after a node loss or a preemption runs again later; a final abort of a running gang ends its run
          if (event.reason.category === 'node-lost' || event.reason.category === 'preempted') this.interrupted(event.jobId);
          else if (event.final) this.ended(event.jobId, event.at);
          break;
        default:
          break;
      }
    }
  }

  /** The workload read so far. */
  workload(): RecordedWorkload {
    const notes: string[] = [];
    const arrivals = [...this.jobs.values()];
    // stamps never go back in a log: the first arrival is the earliest
    const origin = arrivals[0]?.submittedAt ?? 0;
    const workload: WorkloadEntry[] = [];
    for (const seen of arrivals) {
      const id = seen.spec.id;
      let runMs: number;
      if (seen.committedAt !== null && seen.endedAt !== null) {
        runMs = seen.endedAt - seen.committedAt;
      } else {
        const why = `job ${id} ${seen.committedAt === null ? 'never ran' : 'was still running at the end of the log'}`;
        if (seen.spec.runtimeMs === undefined) {
          notes.push(`${why} and gives no runtimeMs hint: left out`);
          continue;
        }
        runMs = seen.spec.runtimeMs;
        notes.push(`${why}: it runs its runtimeMs hint, ${runMs} ms`);
      }
      workload.push({ at: seen.submittedAt - origin, submit: seen.spec, runMs });
    }
    return {
      scenario: {
        nodes: [...this.nodes.values()],
        ...(this.policy === undefined ? {} : { policy: this.policy }),
        ...(this.queues.size === 0 ? {} : { queues: parentsFirst(this.queues) }),
        workload,
      },
      notes,
    };
  }

  private ended(jobId: string, at: number): void {
    const seen = this.jobs.get(jobId);
    if (seen !== undefined && seen.committedAt !== null && seen.endedAt === null) seen.endedAt = at;
  }

  private interrupted(jobId: string): void {
    const seen = this.jobs.get(jobId);
    if (seen !== undefined && seen.endedAt === null) seen.committedAt = null;
  }
}

/** The queues in an order the ingest takes them in: each after its parent (the log kept them a tree). */
function parentsFirst(queues: ReadonlyMap<string, QueueSpec>): QueueSpec[] {
  const out: QueueSpec[] = [];
  const placed = new Set<string>();
  const place = (q: QueueSpec, depth: number): void => {
    if (placed.has(q.name) || depth > queues.size) return;
    const parent = q.parent === undefined ? undefined : queues.get(q.parent);
    if (parent !== undefined) place(parent, depth + 1);
    placed.add(q.name);
    out.push(q);
  };
  for (const q of queues.values()) place(q, 0);
  return out;
}
