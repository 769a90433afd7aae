import { z } from 'zod';
import { validateQueueSpec } from '../contract/validateQueueSpec.ts';
import type { QueueSpec } from '../contract/types.ts';
import { parseWorkloadScenario } from './workloadScenario.ts';
import type { WorkloadScenario } from './workloadScenario.ts';

// The scenario file of `muster simulate` (DESIGN.md §8, §11): steps, or a workload. Nodes and
// submitted jobs are validated by the same code the service uses (an invalid JobSpec is not a
// scenario error: it is answered with a JobRejected line, as the service would); the rest is
// checked here, every error naming the field's path.

const jobRef = z.strictObject({ jobId: z.string() });

const stepBodies = {
  submit: z.unknown(),
  policy: z.unknown(),
  queue: z.unknown(),
  schedule: z.strictObject({}),
  complete: jobRef,
  done: z.strictObject({
    jobId: z.string(),
    member: z.number().int().min(0),
    ok: z.boolean().optional(),
    exitCode: z.number().int().optional(),
    signal: z.string().optional(),
    attempt: z.number().int().min(0).optional(),
  }),
  cancel: jobRef,
  close: jobRef,
  node: z.unknown(),
  nodeLost: z.strictObject({ nodeId: z.string() }),
  advanceMs: z.number().int().min(0),
} as const;

/** A `done` step: one member finished, ok or not, with its exit code or signal (contract v1.2) and the attempt it belonged to (absent: the current one). */
export interface DoneStep {
  jobId: string;
  member: number;
  ok?: boolean | undefined;
  exitCode?: number | undefined;
  signal?: string | undefined;
  attempt?: number | undefined;
}

/** One step of a scenario: exactly one of the known keys. */
export type Step =
  | { submit: unknown }
  | { policy: unknown }
  | { queue: unknown }
  | { schedule: Record<string, never> }
  | { complete: { jobId: string } }
  | { done: DoneStep }
  | { cancel: { jobId: string } }
  | { close: { jobId: string } }
  | { node: unknown }
  | { nodeLost: { nodeId: string } }
  | { advanceMs: number };

/**
 * A scenario of steps: the initial nodes, a policy and queues (validated as the operator's inputs
 * they are), and the steps.
 */
export interface StepsScenario {
  nodes: unknown[];
  policy?: unknown;
  /** QueueSpecs set before the first step, in order (parents first), checked by `parseQueues`. */
  queues?: QueueSpec[];
  steps: Step[];
}

/** A whole scenario: steps (DESIGN.md §8) or a workload (§11, "What-if on a workload"). */
export type Scenario = StepsScenario | WorkloadScenario;

/** What a scenario's text may hold at its top level, and in which mode. */
const TOP_LEVEL = ['nodes', 'policy', 'steps', 'workload', 'until', 'queues'];

const STEP_KEYS = Object.keys(stepBodies) as (keyof typeof stepBodies)[];

/** Parses a scenario's text, or says which step and field is wrong, in one line. */
export function parseScenario(text: string): { ok: true; scenario: Scenario } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `scenario is not valid JSON: ${(err as Error).message}` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, error: 'scenario must be an object {"nodes": [...], "steps": [...]} or {"nodes": [...], "workload": [...]}' };
  }
  const record = raw as Record<string, unknown>;
  const extra = Object.keys(record).find((k) => !TOP_LEVEL.includes(k));
  if (extra !== undefined) return { ok: false, error: `scenario: unknown field ${extra}` };
  const nodes = record.nodes ?? [];
  if (!Array.isArray(nodes)) return { ok: false, error: 'scenario: nodes must be an array' };
  if ('steps' in record && 'workload' in record) {
    return { ok: false, error: 'scenario: both steps and workload given; a scenario is one or the other' };
  }
  const queues = parseQueues(record.queues);
  if (!queues.ok) return queues;
  if ('workload' in record) return parseWorkloadScenario(record, nodes, queues.queues);
  if ('until' in record) return { ok: false, error: 'scenario: until belongs to a workload (in steps, time moves with advanceMs)' };
  if (!Array.isArray(record.steps)) {
    return { ok: false, error: `scenario: ${'steps' in record ? 'steps must be an array' : 'needs steps (a list of steps) or workload (a list of arrivals)'}` };
  }
  const steps: Step[] = [];
  for (const [i, step] of record.steps.entries()) {
    const keys = typeof step === 'object' && step !== null && !Array.isArray(step) ? Object.keys(step) : [];
    const key = keys[0] as keyof typeof stepBodies | undefined;
    if (keys.length !== 1 || key === undefined || !STEP_KEYS.includes(key)) {
      const what = keys.length === 0 ? 'an empty or non-object step' : `keys ${keys.join(', ')}`;
      return { ok: false, error: `steps.${i}: unknown step (${what}); expected one of ${STEP_KEYS.join(', ')}` };
    }
    const body = (step as Record<string, unknown>)[key];
    const parsed = stepBodies[key].safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = [`steps.${i}.${key}`, ...(issue?.path ?? []).map(String)].join('.');
      return { ok: false, error: `${path}: ${issue?.message ?? 'invalid'}` };
    }
    steps.push({ [key]: parsed.data } as Step);
  }
  return {
    ok: true,
    scenario: { nodes, steps, ...(record.policy === undefined ? {} : { policy: record.policy }), ...(queues.queues === undefined ? {} : { queues: queues.queues }) },
  };
}

/**
 * A scenario's top-level `queues` (DESIGN.md §12): an array of QueueSpecs, each validated as the
 * operator's input it is; what depends on the queues before it (the parent exists, no cycle) is
 * checked when the run sets them, through the same ingest the leader uses.
 */
export function parseQueues(value: unknown): { ok: true; queues: QueueSpec[] | undefined } | { ok: false; error: string } {
  if (value === undefined) return { ok: true, queues: undefined };
  if (!Array.isArray(value)) return { ok: false, error: 'scenario: queues must be an array of QueueSpecs (parents before their children)' };
  const queues: QueueSpec[] = [];
  for (const [i, spec] of value.entries()) {
    const valid = validateQueueSpec(spec);
    if (!valid.ok) return { ok: false, error: `queues.${i}.${valid.error.message}` };
    queues.push(valid.value);
  }
  return { ok: true, queues };
}
