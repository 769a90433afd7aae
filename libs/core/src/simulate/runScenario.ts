import { validateNodeSpec, validatePolicySpec } from '../contract/index.ts';
import type { TurnTransaction } from '../turn/turn.ts';
import { parseScenario } from './scenario.ts';
import type { Scenario, Step } from './scenario.ts';
import { Simulation } from './simulation.ts';
import type { SimulationHashes } from './simulation.ts';
import { runWorkload } from './runWorkload.ts';
import { subjects } from '../wire/subjects.ts';

/**
 * Runs a scenario's text through the same ingest and session code the leader uses, with no NATS:
 * every decision (and rejection) as one JSON line, then (for a workload) one JobStats line per
 * job, then a Summary line. Same text, same bytes.
 */
export function runScenarioText(text: string, options: ScenarioOptions = {}): ScenarioRun {
  const parsed = parseScenario(text);
  if (!parsed.ok) return parsed;
  return runScenario(parsed.scenario, options);
}

/** What a scenario run printed (its lines, empty when `onLine` took them) and wrote (its transactions, as the leader would append them), or why it could not run. */
export type ScenarioRun = { ok: true; lines: string[]; transactions: TurnTransaction[] } | { ok: false; error: string };

/** Options of a scenario run. */
export interface ScenarioOptions {
  /** A PolicySpec given on the command line: applied after the scenario's own policy, whose fields it replaces. */
  policy?: unknown;
  /** Whether the run returns its transactions (default true; false: `transactions` is empty, and a long run holds less). */
  transactions?: boolean;
  /** The hashes to use (default: the core's own): a caller may pass its platform's native ones, which give the same values. */
  hashes?: SimulationHashes;
  /** Takes each printed line as the run makes it, so a long run holds none (the result's `lines` is then empty). */
  onLine?: (line: string) => void;
}

/** Runs a parsed scenario (see `runScenarioText`). */
export function runScenario(scenario: Scenario, options: ScenarioOptions = {}): ScenarioRun {
  for (const [i, node] of scenario.nodes.entries()) {
    const valid = validateNodeSpec(node);
    if (!valid.ok) return { ok: false, error: `nodes.${i}${valid.error.path === '' ? '' : `.${valid.error.path}`}: ${valid.error.message}` };
  }
  if (options.policy !== undefined) {
    const valid = validatePolicySpec(options.policy);
    if (!valid.ok) return { ok: false, error: `the policy given on the command line: ${valid.error.message}` };
  }
  const sim = new Simulation(options.hashes);
  sim.keepTransactions = options.transactions ?? true;
  // a new log starts under the v1.1 defaults; a top-level policy is the operator's first input
  sim.start();
  if (scenario.policy !== undefined) sim.input(subjects.policy, scenario.policy);
  if (options.policy !== undefined) sim.input(subjects.policy, options.policy);
  const queues = setQueues(sim, scenario.queues ?? []);
  if (queues !== null) return { ok: false, error: queues };
  // a run that will not start prints nothing: the lines so far are handed out once it does
  if (options.onLine !== undefined) {
    for (const line of sim.lines.splice(0)) options.onLine(line);
    sim.onLine = options.onLine;
  }
  for (const node of scenario.nodes) sim.register(node);
  if ('workload' in scenario) return { ok: true, lines: runWorkload(sim, scenario), transactions: sim.transactions };
  for (const step of scenario.steps) runStep(sim, step);
  sim.print(JSON.stringify(sim.summary()));
  return { ok: true, lines: sim.lines, transactions: sim.transactions };
}

/** One step of a steps scenario (DESIGN.md §8). */
function runStep(sim: Simulation, step: Step): void {
  if ('submit' in step) sim.input(subjects.submit, step.submit);
  else if ('policy' in step) sim.input(subjects.policy, step.policy);
  else if ('queue' in step) sim.setQueue(step.queue);
  else if ('schedule' in step) sim.schedule();
  else if ('complete' in step) sim.complete(step.complete.jobId);
  else if ('done' in step) sim.done(step.done);
  else if ('cancel' in step) sim.input(subjects.cancel, step.cancel);
  else if ('close' in step) sim.input(subjects.close, step.close);
  else if ('node' in step) sim.register(step.node);
  else if ('nodeLost' in step) sim.input(subjects.nodeInput(step.nodeLost.nodeId, 'lost'), {});
  else sim.now += step.advanceMs;
}

/**
 * Sets a scenario's top-level queues, in order, through the core's ingest; a queue the ingest
 * refuses (its parent unknown, a cycle) is a scenario error naming it, and the run does not start.
 */
function setQueues(sim: Simulation, queues: readonly unknown[]): string | null {
  let refused: string | null = null;
  sim.onEvent = (event) => {
    if (event.type === 'InputRejected') refused ??= event.reason.message;
  };
  try {
    for (const [i, queue] of queues.entries()) {
      sim.setQueue(queue);
      if (refused !== null) return `queues.${i}.${refused}`;
    }
    return null;
  } finally {
    sim.onEvent = null;
  }
}
