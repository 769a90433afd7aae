import { queueSpecSchema } from './queueSpecSchema.ts';
import { specIssue, specIssueFromZod } from './specIssueFromZod.ts';
import type { QueueResources, QueueSpec, Validated } from './types.ts';

const SUBJECT = 'queue';

const RESOURCES = ['cpu', 'memoryMb', 'gpus'] as const;

/**
 * Validates a QueueSpec from outside (DESIGN.md §12) on its own: shape, ranges, a guarantee within
 * the queue's own max, a default limit within its maximum. Whether the parent exists and the tree
 * stays a tree depends on the queues defined, and is checked at ingest.
 */
export function validateQueueSpec(input: unknown): Validated<QueueSpec> {
  const parsed = queueSpecSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, error: specIssueFromZod(parsed.error.issues, queueSpecSchema, SUBJECT) };
  const wire = parsed.data;
  for (const r of RESOURCES) {
    const g = wire.guaranteed[r];
    const m = wire.max[r];
    if (g !== undefined && m !== undefined && g > m) {
      return { ok: false, error: specIssue(`guaranteed.${r}`, `${g} is above the queue's max of ${m}`, SUBJECT) };
    }
  }
  if (wire.defaultRuntimeLimitMs !== undefined && wire.maxRuntimeLimitMs !== undefined && wire.defaultRuntimeLimitMs > wire.maxRuntimeLimitMs) {
    return { ok: false, error: specIssue('defaultRuntimeLimitMs', `${wire.defaultRuntimeLimitMs} is above maxRuntimeLimitMs ${wire.maxRuntimeLimitMs}`, SUBJECT) };
  }
  return {
    ok: true,
    value: {
      name: wire.name,
      ...(wire.parent === undefined ? {} : { parent: wire.parent }),
      weight: wire.weight,
      guaranteed: named(wire.guaranteed),
      max: named(wire.max),
      preemption: { withinQueue: wire.preemption.withinQueue, reclaim: wire.preemption.reclaim },
      ...(wire.defaultRuntimeLimitMs === undefined ? {} : { defaultRuntimeLimitMs: wire.defaultRuntimeLimitMs }),
      ...(wire.maxRuntimeLimitMs === undefined ? {} : { maxRuntimeLimitMs: wire.maxRuntimeLimitMs }),
    },
  };
}

// the resources given, in a fixed key order (the spec is hashed as part of the state)
function named(r: QueueResources): QueueResources {
  const out: QueueResources = {};
  for (const k of RESOURCES) if (r[k] !== undefined) out[k] = r[k];
  return out;
}
