import { makeTransaction } from '../chain.ts';
import type { Stamp } from '../chain.ts';
import { transactionHash } from '../envelope.ts';
import type { TransactionKind } from '../envelope.ts';
import type { SchedulerEvent } from '../events.ts';
import { foldTransactions } from '../evolve.ts';
import { ingest } from '../ingest.ts';
import { decide } from '../session/index.ts';
import { shardEntriesSorted, shardGet } from '../shard.ts';
import type { State } from '../state.ts';
import { initialState } from '../state.ts';
import { stateHash } from '../stateHash.ts';
import { validateNodeSpec } from '../contract/index.ts';
import { parseScenario } from './scenario.ts';
import type { Scenario, Step } from './scenario.ts';

/** The leader name simulated transactions carry. */
const SIMULATOR = 'simulator';

/** Events `muster simulate` prints, one JSON object a line. */
const PRINTED = new Set(['GangCommitted', 'GangAborted', 'JobRejected', 'InputRejected']);

/**
 * Runs a scenario's text through the same ingest and session code the leader uses, with no NATS:
 * every decision (and rejection) as one JSON line, then a Summary line. Same text, same bytes.
 */
export function runScenarioText(text: string): { ok: true; lines: string[] } | { ok: false; error: string } {
  const parsed = parseScenario(text);
  if (!parsed.ok) return parsed;
  return runScenario(parsed.scenario);
}

/** Runs a parsed scenario (see `runScenarioText`). */
export function runScenario(scenario: Scenario): { ok: true; lines: string[] } | { ok: false; error: string } {
  for (const [i, node] of scenario.nodes.entries()) {
    const valid = validateNodeSpec(node);
    if (!valid.ok) return { ok: false, error: `nodes.${i}${valid.error.path === '' ? '' : `.${valid.error.path}`}: ${valid.error.message}` };
  }
  const sim = new Simulation();
  for (const node of scenario.nodes) sim.input(`muster.in.node.${(node as { id: string }).id}.register`, node);
  for (const step of scenario.steps) sim.step(step);
  return { ok: true, lines: [...sim.lines, sim.summary()] };
}

/** A log kept in memory: each transaction is folded with the same code replay uses. */
class Simulation {
  state: State = initialState();
  lines: string[] = [];
  private prev: string | null = null;
  private inputSeq = 0;
  private now = 0;
  private counts = { sessions: 0, committed: 0, aborted: 0, rejected: 0, transactions: 0, events: 0 };

  step(step: Step): void {
    if ('submit' in step) this.input('muster.in.submit', step.submit);
    else if ('schedule' in step) this.schedule();
    else if ('complete' in step) this.complete(step.complete.jobId);
    else if ('cancel' in step) this.input('muster.in.cancel', step.cancel);
    else if ('close' in step) this.input('muster.in.close', step.close);
    else if ('node' in step) {
      const id = typeof step.node === 'object' && step.node !== null ? (step.node as { id?: unknown }).id : undefined;
      this.input(`muster.in.node.${typeof id === 'string' && id !== '' ? id : '_'}.register`, step.node);
    } else if ('nodeLost' in step) this.input(`muster.in.node.${step.nodeLost.nodeId}.lost`, {});
    else this.now += step.advanceMs;
  }

  input(subject: string, body: unknown): void {
    const events = ingest(this.state, { seq: ++this.inputSeq, subject, data: JSON.stringify(body) }, this.now);
    this.commit('ingest', this.state.session, events);
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

  schedule(): void {
    const parts = decide(this.state, this.now);
    if (parts.length === 0) return;
    this.counts.sessions++;
    const session = this.state.session + 1;
    for (const [i, events] of parts.entries()) {
      this.commit('session', session, events, i + 1, parts.length);
    }
  }

  private commit(kind: TransactionKind, session: number, events: SchedulerEvent[], part = 1, parts = 1): void {
    if (events.length === 0) return;
    const stamp: Stamp = { kind, term: 1, leader: SIMULATOR, at: this.now, session, part, parts };
    const tx = makeTransaction(this.prev, stamp, events);
    const seq = ++this.counts.transactions;
    this.state = foldTransactions(this.state, [{ seq, tx }]);
    this.prev = transactionHash(tx);
    this.counts.events += events.length;
    for (const event of events) {
      if (!PRINTED.has(event.type)) continue;
      if (event.type === 'GangCommitted') this.counts.committed++;
      else if (event.type === 'GangAborted') this.counts.aborted++;
      else this.counts.rejected++;
      this.lines.push(JSON.stringify(event));
    }
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
