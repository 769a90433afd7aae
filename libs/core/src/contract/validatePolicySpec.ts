import { policySpecSchema } from './policySpecSchema.ts';
import { specIssueFromZod } from './specIssueFromZod.ts';
import type { PolicySpec, Validated } from './types.ts';

const SUBJECT = 'policy';

/** Validates a PolicySpec from outside (DESIGN.md §11): the fields it names, or the first issue, by path. */
export function validatePolicySpec(input: unknown): Validated<PolicySpec> {
  const parsed = policySpecSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, error: specIssueFromZod(parsed.error.issues, policySpecSchema, SUBJECT) };
  const wire = parsed.data;
  return {
    ok: true,
    value: {
      ...(wire.reserveDepth === undefined ? {} : { reserveDepth: wire.reserveDepth }),
      ...(wire.assumedRuntimeMs === undefined ? {} : { assumedRuntimeMs: wire.assumedRuntimeMs }),
      ...(wire.minRuntimeBeforePreemptionMs === undefined ? {} : { minRuntimeBeforePreemptionMs: wire.minRuntimeBeforePreemptionMs }),
      ...(wire.fairShareHalfLifeMs === undefined ? {} : { fairShareHalfLifeMs: wire.fairShareHalfLifeMs }),
    },
  };
}
