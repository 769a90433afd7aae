import { z } from 'zod';

// The scenario file of `muster simulate` (DESIGN.md §8, contract v1). Nodes and submitted jobs are
// validated by the same code the service uses (an invalid JobSpec in a step is not a scenario
// error: it is answered with a JobRejected line, as the service would); the rest is checked here.

const jobRef = z.strictObject({ jobId: z.string() });

const stepBodies = {
  submit: z.unknown(),
  policy: z.unknown(),
  schedule: z.strictObject({}),
  complete: jobRef,
  done: z.strictObject({ jobId: z.string(), member: z.number().int().min(0), ok: z.boolean().optional() }),
  cancel: jobRef,
  close: jobRef,
  node: z.unknown(),
  nodeLost: z.strictObject({ nodeId: z.string() }),
  advanceMs: z.number().int().min(0),
} as const;

/** One step of a scenario: exactly one of the known keys. */
export type Step =
  | { submit: unknown }
  | { policy: unknown }
  | { schedule: Record<string, never> }
  | { complete: { jobId: string } }
  | { done: { jobId: string; member: number; ok?: boolean | undefined } }
  | { cancel: { jobId: string } }
  | { close: { jobId: string } }
  | { node: unknown }
  | { nodeLost: { nodeId: string } }
  | { advanceMs: number };

/** A whole scenario: the initial nodes, a policy (validated as the operator's input it is), and the steps. */
export interface Scenario {
  nodes: unknown[];
  policy?: unknown;
  steps: Step[];
}

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
    return { ok: false, error: 'scenario must be an object {"nodes": [...], "steps": [...]}' };
  }
  const record = raw as Record<string, unknown>;
  const extra = Object.keys(record).find((k) => k !== 'nodes' && k !== 'steps' && k !== 'policy');
  if (extra !== undefined) return { ok: false, error: `scenario: unknown field ${extra}` };
  const nodes = record.nodes ?? [];
  if (!Array.isArray(nodes)) return { ok: false, error: 'scenario: nodes must be an array' };
  if (!Array.isArray(record.steps)) return { ok: false, error: 'scenario: steps must be an array' };
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
  return { ok: true, scenario: { nodes, steps, ...(record.policy === undefined ? {} : { policy: record.policy }) } };
}
