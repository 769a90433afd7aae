import { shardEntriesSorted, shardGet } from '../shard.ts';
import type { State } from '../state.ts';
import { initialState } from '../state.ts';
import { stateHash } from '../stateHash.ts';
import { validateNodeSpec } from '../contract/index.ts';
import { turn } from '../turn/turn.ts';
import type { TurnCommand, TurnTransaction } from '../turn/turn.ts';
import { TurnContext } from '../turn/turnContext.ts';
import { parseScenario } from './scenario.ts';
import type { Scenario, Step } from './scenario.ts';

/** The leader name simulated transactions carry. */
const SIMULATOR = 'simulator';

/** Events `muster simulate` prints, one JSON object a line. */
const PRINTED = new Set(['JobRejected', 'InputRejected', 'GangCommitted', 'GangAborted', 'GangReserved', 'ReservationCleared']);

/**
 * Runs a scenario's text through the same ingest and session code the leader uses, with no NATS:
 * every decision (and rejection) as one JSON line, then a Summary line. Same text, same bytes.
 */
export function runScenarioText(text: string): ScenarioRun {
  const parsed = parseScenario(text);
  if (!parsed.ok) return parsed;
  return runScenario(parsed.scenario);
}

/** What a scenario run printed (its lines) and wrote (its transactions, as the leader would append them), or why it could not run. */
export type ScenarioRun = { ok: true; lines: string[]; transactions: TurnTransaction[] } | { ok: false; error: string };

/** Runs a parsed scenario (see `runScenarioText`). */
export function runScenario(scenario: Scenario): ScenarioRun {
  for (const [i, node] of scenario.nodes.entries()) {
    const valid = validateNodeSpec(node);
    if (!valid.ok) return { ok: false, error: `nodes.${i}${valid.error.path === '' ? '' : `.${valid.error.path}`}: ${valid.error.message}` };
  }
  const sim = new Simulation();
  // a new log starts under the v1.1 defaults; a top-level policy is the operator's first input
  sim.start();
  if (scenario.policy !== undefined) sim.input('muster.in.policy', scenario.policy);
  for (const node of scenario.nodes) sim.input(`muster.in.node.${(node as { id: string }).id}.register`, node);
  for (const step of scenario.steps) sim.step(step);
  return { ok: true, lines: [...sim.lines, sim.summary()], transactions: sim.transactions };
}

/** A log kept in memory, written by the core's turn as the leader writes it (one input a turn). */
class Simulation {
  state: State = initialState();
  lines: string[] = [];
  readonly transactions: TurnTransaction[] = [];
  private readonly context = new TurnContext();
  private prev: string | null = null;
  private inputSeq = 0;
  private now = 0;
  private counts = { sessions: 0, committed: 0, aborted: 0, rejected: 0, reserved: 0, transactions: 0, events: 0 };

  /** What a new log's first leader writes: the v1.1 defaults. */
  start(): void {
    this.turn([{ start: true }]);
  }

  step(step: Step): void {
    if ('submit' in step) this.input('muster.in.submit', step.submit);
    else if ('policy' in step) this.input('muster.in.policy', step.policy);
    else if ('schedule' in step) this.schedule();
    else if ('complete' in step) this.complete(step.complete.jobId);
    else if ('done' in step) this.done(step.done.jobId, step.done.member, step.done.ok ?? true);
    else if ('cancel' in step) this.input('muster.in.cancel', step.cancel);
    else if ('close' in step) this.input('muster.in.close', step.close);
    else if ('node' in step) {
      const id = typeof step.node === 'object' && step.node !== null ? (step.node as { id?: unknown }).id : undefined;
      this.input(`muster.in.node.${typeof id === 'string' && id !== '' ? id : '_'}.register`, step.node);
    } else if ('nodeLost' in step) this.input(`muster.in.node.${step.nodeLost.nodeId}.lost`, {});
    else this.now += step.advanceMs;
  }

  input(subject: string, body: unknown): void {
    this.turn([{ inputs: [{ seq: ++this.inputSeq, subject, data: JSON.stringify(body) }] }]);
  }

  /** Finishes every running member of a job, each as its node's agent would report it. */
  complete(jobId: string): void {
    const job = shardGet(this.state.jobs, jobId);
    const members = job?.members ?? [];
    if (job === undefined || job.status !== 'running') {
      this.input('muster.in.node._.done', { jobId, member: 0, ok: true });
      return;
    }
    for (const [index, member] of members.entries()) {
      if (member === null || member.done) continue;
      this.input(`muster.in.node.${member.node}.done`, { jobId, member: index, ok: true });
    }
  }

  /** One member of a job finished, reported by the agent of the node it is bound to (any node when it is bound to none). */
  done(jobId: string, member: number, ok: boolean): void {
    const bound = shardGet(this.state.jobs, jobId)?.members[member];
    this.input(`muster.in.node.${bound === null || bound === undefined ? '_' : bound.node}.done`, { jobId, member, ok });
  }

  schedule(): void {
    if (this.turn([{ session: true }]) > 0) this.counts.sessions++;
  }

  /** Runs one turn at the current time; prints and counts what it wrote; returns how many transactions. */
  private turn(commands: TurnCommand[]): number {
    const result = turn(this.context, this.state, this.prev, commands, { term: 1, leader: SIMULATOR, at: this.now });
    this.state = result.state;
    this.prev = result.lastHash;
    this.counts.transactions += result.transactions.length;
    this.transactions.push(...result.transactions);
    for (const { tx } of result.transactions) {
      this.counts.events += tx.events.length;
      for (const event of tx.events) {
        if (!PRINTED.has(event.type)) continue;
        if (event.type === 'GangCommitted') this.counts.committed++;
        else if (event.type === 'GangAborted') this.counts.aborted++;
        else if (event.type === 'GangReserved') this.counts.reserved++;
        else if (event.type !== 'ReservationCleared') this.counts.rejected++;
        this.lines.push(JSON.stringify(event));
      }
    }
    return result.transactions.length;
  }

  summary(): string {
    const byStatus: Record<string, number> = {};
    for (const [, job] of shardEntriesSorted(this.state.jobs)) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
    return JSON.stringify({
      type: 'Summary',
      at: this.now,
      ...this.counts,
      jobs: byStatus,
      nodes: shardEntriesSorted(this.state.nodes).length,
      stateHash: stateHash(this.state),
    });
  }
}
