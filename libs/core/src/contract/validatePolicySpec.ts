import { policySpecSchema } from './policySpecSchema.ts';
import { specIssueFromZod } from './specIssueFromZod.ts';
import type { PolicySpec, Validated } from './types.ts';

const SUBJECT = 'policy';

/** Validates a PolicySpec from outside (DESIGN.md §11): the fields it names, or the first issue, by path. */
export function validatePolicySpec(input: unknown): Validated<PolicySpec> {
  const parsed = policySpecSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, error: specIssueFromZod(parsed.error.issues, policySpecSchema, SUBJECT) };
  // a field given as undefined (from code, never from JSON) is a field not named
  return { ok: true, value: Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) as PolicySpec };
}
