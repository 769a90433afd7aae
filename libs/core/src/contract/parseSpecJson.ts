import type { JobSpec, NodeSpec, Validated } from './types.ts';
import { validateJobSpec } from './validateJobSpec.ts';
import { validateNodeSpec } from './validateNodeSpec.ts';

/** Parses JSON text and validates it as a JobSpec; bad JSON is an issue at path ''. */
export function parseJobSpecJson(text: string): Validated<JobSpec> {
  return parseThen(text, validateJobSpec);
}

/** Parses JSON text and validates it as a NodeSpec; bad JSON is an issue at path ''. */
export function parseNodeSpecJson(text: string): Validated<NodeSpec> {
  return parseThen(text, validateNodeSpec);
}

function parseThen<T>(text: string, validate: (input: unknown) => Validated<T>): Validated<T> {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: { path: '', message: `invalid JSON: ${e instanceof Error ? e.message : String(e)}` } };
  }
  return validate(input);
}
