import type { Decision, GangAborted, GangCommitted, GangResized, SchedulerEvent } from '../events.ts';
import { isDecision } from '../events.ts';
import type { Input } from '../ingest.ts';
import type { SessionStats } from '../session/sessionStats.ts';
import { shardEntriesSorted, shardGet } from '../shard.ts';
import type { State } from '../state.ts';
import { initialState } from '../state.ts';
import { turn } from '../turn/turn.ts';
import type { TurnCommand, TurnTransaction } from '../turn/turn.ts';
import { TurnContext } from '../turn/turnContext.ts';
import { subjects } from '../wire/subjects.ts';

// given / when / then over the core, data first: steps are inputs as the leader reads them from
// MUSTER_IN, scheduling sessions and time, each run as the leader runs it: a turn of the core.

/** One step of a test: an input, a session, or time passing. */
export type Step =
  | { kind: 'input'; subject: string; body: unknown }
  | { kind: 'schedule'; at?: number; dueBy?: number }
  | { kind: 'complete'; jobId: string; ok?: boolean }
  | { kind: 'advance'; ms: number }
  | { kind: 'retire'; retainMs: number }
  | { kind: 'policy'; spec: Record<string, unknown> };

/** An operator sets the policy (the fields given replace the ones in force). */
export function policy(spec: Record<string, unknown>): Step {
  return { kind: 'policy', spec };
}

/** An operator creates or replaces a queue (DESIGN.md §12), on `muster.in.queue.<name>.set`. */
export function queue(spec: Record<string, unknown>): Step {
  return { kind: 'input', subject: subjects.queueSet(String(spec.name)), body: spec };
}

/** Registers a node (body from `node()`). */
export function register(body: Record<string, unknown>): Step {
  return { kind: 'input', subject: subjects.nodeInput(String(body.id), 'register'), body };
}

/** Submits a job (body from `job()`). */
export function submit(body: Record<string, unknown>): Step {
  return { kind: 'input', subject: subjects.submit, body };
}

/** Cancels a job. */
export function cancel(jobId: string): Step {
  return { kind: 'input', subject: subjects.cancel, body: { jobId } };
}

/** Closes a kept-warm job. */
export function close(jobId: string): Step {
  return { kind: 'input', subject: subjects.close, body: { jobId } };
}

/** Drains a node. */
export function drain(nodeId: string): Step {
  return { kind: 'input', subject: subjects.nodeInput(nodeId, 'drain'), body: {} };
}

/** An operator declares a node lost. */
export function lose(nodeId: string): Step {
  return { kind: 'input', subject: subjects.nodeInput(nodeId, 'lost'), body: {} };
}

/** One member of a job finished on its node (`how`: its exit code, signal and attempt, contract v1.2). */
export function done(nodeId: string, jobId: string, member: number, ok = true, how: { exitCode?: number; signal?: string; attempt?: number } = {}): Step {
  return { kind: 'input', subject: subjects.nodeInput(nodeId, 'done'), body: { jobId, member, ok, ...how } };
}

/** A scheduling session at the current time (or at `at`, which also moves the clock). */
export function schedule(at?: number): Step {
  return at === undefined ? { kind: 'schedule' } : { kind: 'schedule', at };
}

/** A session at the current time whose timeouts and runtime limits fall due only up to `dueBy` (the leader had inputs stored before then not yet taken). */
export function scheduleDueBy(dueBy: number): Step {
  return { kind: 'schedule', dueBy };
}

/** Every running member of a job reports done (each through its node's `done` input). */
export function complete(jobId: string, ok = true): Step {
  return { kind: 'complete', jobId, ok };
}

/** Time passes. */
export function advance(ms: number): Step {
  return { kind: 'advance', ms };
}

/** The leader retires the finished jobs due at the current time (a fact transaction). */
export function retire(retainMs: number): Step {
  return { kind: 'retire', retainMs };
}

/** The leader name the harness's transactions carry (the simulator's, so that both write the same bytes). */
const HARNESS_LEADER = 'simulator';

/**
 * A cluster driven the way the leader drives the core: every step a turn of the core, one input a
 * turn. It starts as a new log does, under the v1.1 policy defaults, unless `v1` asks for a log
 * written before contract v1.1 (no policy: no reservations, no runtime limits).
 */
export class Cluster {
  state: State = initialState();
  at = 0;
  /** The turn context the cluster's turns share (its host index cache, for tests that look at it). */
  readonly context = new TurnContext();
  private inputSeq = 0;
  private lastHash: string | null = null;
  /** Every transaction's events so far, in order. */
  readonly log: SchedulerEvent[][] = [];
  /** Every transaction so far, in order, as the turn wrote it. */
  readonly transactions: TurnTransaction[] = [];
  /** Stats of the last session. */
  lastStats: SessionStats | null = null;
  /** Every input so far, as MUSTER_IN would hold it (an offline audit reads them). */
  readonly inputs: Input[] = [];

  constructor(options: { v1?: boolean } = {}) {
    if (options.v1 !== true) this.turn([{ start: true }]);
  }

  /** Runs one step; returns the events of each transaction it wrote. */
  run(step: Step): SchedulerEvent[][] {
    switch (step.kind) {
      case 'input': {
        const input: Input = { seq: ++this.inputSeq, subject: step.subject, data: JSON.stringify(step.body) };
        this.inputs.push(input);
        return this.turn([{ inputs: [input] }]);
      }
      case 'schedule': {
        if (step.at !== undefined) this.at = Math.max(this.at, step.at);
        return this.turn([step.dueBy === undefined ? { session: true } : { session: true, dueBy: step.dueBy }]);
      }
      case 'complete': {
        const job = shardGet(this.state.jobs, step.jobId);
        const parts: SchedulerEvent[][] = [];
        job?.members.forEach((m, i) => {
          if (m === null || m.done) return;
          parts.push(...this.run(done(m.node, step.jobId, i, step.ok ?? true)));
        });
        return parts;
      }
      case 'advance':
        this.at += step.ms;
        return [];
      case 'retire':
        return this.turn([{ retire: { retainMs: step.retainMs, limit: 1000 } }]);
      case 'policy':
        return this.run({ kind: 'input', subject: subjects.policy, body: step.spec });
    }
  }

  /** One turn of the core at the cluster's time. */
  private turn(commands: TurnCommand[]): SchedulerEvent[][] {
    const result = turn(this.context, this.state, this.lastHash, commands, { term: 1, leader: HARNESS_LEADER, at: this.at });
    if ('session' in commands[0]!) this.lastStats = result.session;
    this.state = result.state;
    this.lastHash = result.lastHash;
    this.transactions.push(...result.transactions);
    const parts = result.transactions.map(({ tx }) => tx.events);
    this.log.push(...parts);
    return parts;
  }
}

/** What a `when` step did, with assertions chained by `then`. */
export class Outcome {
  constructor(readonly cluster: Cluster, readonly parts: SchedulerEvent[][]) {}

  /** Every event the step wrote, in order. */
  get events(): SchedulerEvent[] {
    return this.parts.flat();
  }

  /** The gang decisions among them. */
  get decisions(): Decision[] {
    return this.events.filter(isDecision);
  }

  /** The commits among them. */
  get commits(): GangCommitted[] {
    return this.events.filter((e): e is GangCommitted => e.type === 'GangCommitted');
  }

  /** The resizes of elastic gangs among them. */
  get resizes(): GangResized[] {
    return this.events.filter((e): e is GangResized => e.type === 'GangResized');
  }

  /** The aborts among them. */
  get aborts(): GangAborted[] {
    return this.events.filter((e): e is GangAborted => e.type === 'GangAborted');
  }

  /** The state after the step. */
  get state(): State {
    return this.cluster.state;
  }

  /** Runs a check on this outcome and returns it, for chaining. */
  then(check: (outcome: Outcome) => void): Outcome {
    check(this);
    return this;
  }

  /** Runs another step on the same cluster. */
  when(step: Step): Outcome {
    return new Outcome(this.cluster, this.cluster.run(step));
  }
}

/** The cluster's jobs in id order that pass `keep`, one picked by a generated number (modulo), or undefined when none. */
function picked(cluster: Cluster, pick: number, keep: (status: string) => boolean): string | undefined {
  const ids = shardEntriesSorted(cluster.state.jobs).filter(([, j]) => keep(j.status)).map(([id]) => id);
  return ids.length === 0 ? undefined : ids[pick % ids.length];
}

/** Completes a running job picked by a generated number (property tests), if any runs. */
export function finishPicked(cluster: Cluster, pick: number): void {
  const id = picked(cluster, pick, (s) => s === 'running');
  if (id !== undefined) cluster.run(complete(id));
}

/** Cancels a pending or running job picked by a generated number (property tests), if any. */
export function cancelPicked(cluster: Cluster, pick: number): void {
  const id = picked(cluster, pick, (s) => s === 'pending' || s === 'running');
  if (id !== undefined) cluster.run(cancel(id));
}

/** A cluster after some steps, ready for `when`. */
export function given(steps: readonly Step[]): { cluster: Cluster; when(step: Step): Outcome } {
  const cluster = new Cluster();
  for (const step of steps) cluster.run(step);
  return { cluster, when: (step) => new Outcome(cluster, cluster.run(step)) };
}

/** Members per node of a commit's allocations, as `{node: members}` (roles summed). */
export function placement(commit: GangCommitted): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of commit.allocations) out[a.node] = (out[a.node] ?? 0) + a.members.length;
  return out;
}
