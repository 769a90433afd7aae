// Drives a real scheduler through MUSTER_IN for recorded histories and live audit tests: inputs
// with their own msg ids, waits on the leader's folded state, completions as agents report them,
// and heartbeats on core NATS for the nodes that are meant to stay alive.
import { publishInput, sleep, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { needsSession, shardGet } from '@muster/core';
import type { JobState, State } from '@muster/core';
import type { SchedulerHandle } from '@muster/scheduler';

/** Starts and stops scheduler replicas for a workload (the first one started leads). */
export interface Replicas {
  start(id: string): Promise<SchedulerHandle>;
  stop(id: string): Promise<void>;
  /** The replica that leads now, waiting for one (throws after `timeoutMs`). */
  leader(timeoutMs?: number): Promise<SchedulerHandle>;
}

/** A workload's view of the cluster: inputs, waits on state, completions, heartbeats, replicas. */
export class WorkloadDriver {
  private inputs = 0;
  private readonly beating = new Set<string>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly name: string,
    private readonly bus: Bus,
    readonly replicas: Replicas,
  ) {
    this.timer = setInterval(() => {
      for (const id of this.beating) this.bus.publish(subjects.heartbeat(id), '{}');
    }, 200);
  }

  /** Publishes one input with a msg id of its own; returns its MUSTER_IN sequence. */
  async input(subject: string, body: unknown): Promise<number> {
    const ack = await publishInput(this.bus, subject, body, `${this.name}:${++this.inputs}`);
    return ack.seq;
  }

  /** Registers a node and keeps it alive with heartbeats. */
  async register(node: { id: string } & Record<string, unknown>): Promise<void> {
    this.beating.add(node.id);
    await this.input(`muster.in.node.${node.id}.register`, node);
  }

  /** Submits a JobSpec (valid or not). */
  async submit(job: Record<string, unknown>): Promise<number> {
    return this.input('muster.in.submit', job);
  }

  /** Stops a node's heartbeats: the leader will append it as lost after its timeout. */
  silence(nodeId: string): void {
    this.beating.delete(nodeId);
  }

  /** Reports every running, unfinished member of a job done (as each node's agent would). */
  async complete(jobId: string, ok = true): Promise<void> {
    const job = await this.job(jobId, (j) => j.status === 'running');
    for (const [member, m] of job.members.entries()) {
      if (m !== null && !m.done) await this.input(`muster.in.node.${m.node}.done`, { jobId, member, ok });
    }
  }

  /** Waits until the leader's state shows the job and `check` holds for it. */
  async job(jobId: string, check: (job: JobState) => boolean, timeoutMs = 15_000): Promise<JobState> {
    let found: JobState | undefined;
    await this.until(`job ${jobId}`, (s) => {
      found = shardGet(s.jobs, jobId);
      return found !== undefined && check(found);
    }, timeoutMs);
    return found!;
  }

  /** Waits until `check` holds on the leader's state. */
  async until(what: string, check: (state: State) => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.replicas.leader(Math.max(1, deadline - Date.now()));
      if (check(leader.state())) return;
      if (Date.now() > deadline) throw new Error(`${this.name}: timed out waiting for ${what}`);
      await sleep(25);
    }
  }

  /** Waits until the leader has ingested input `lastInputSeq`, needs no session, and its log stands still. */
  async settle(lastInputSeq: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let seq = -1;
    let since = Date.now();
    for (;;) {
      const state = (await this.replicas.leader(Math.max(1, deadline - Date.now()))).state();
      if (state.seq !== seq) {
        seq = state.seq;
        since = Date.now();
      }
      if (state.lastInputSeq >= lastInputSeq && !needsSession(state, Date.now()) && Date.now() - since > 400) return;
      if (Date.now() > deadline) throw new Error(`${this.name}: the log did not settle (seq ${state.seq}, input ${state.lastInputSeq} of ${lastInputSeq})`);
      await sleep(50);
    }
  }

  /** Stops the heartbeats. */
  close(): void {
    clearInterval(this.timer);
    this.beating.clear();
  }
}

