import type { Decision, GangResized } from '@muster/core';

const decoder = new TextDecoder();

/**
 * What `muster.decision.<jobId>` carries that a publisher follows: a gang decision, or an elastic
 * gang's resize (DESIGN.md §13: grown toward its full size, or shrunk by a preemption, `by`).
 */
export type JobDecision = Decision | GangResized;

/** Reads a `muster.decision.<jobId>` message body; null when it is neither a gang decision nor a resize. */
export function parseDecision(data: Uint8Array): JobDecision | null {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const d = value as { type?: unknown; jobId?: unknown; members?: unknown; allocations?: unknown };
  if (typeof d.jobId !== 'string') return null;
  if (d.type === 'GangCommitted' || d.type === 'GangAborted') return value as Decision;
  if (d.type === 'GangResized' && typeof d.members === 'number' && Array.isArray(d.allocations)) return value as GangResized;
  return null;
}

/**
 * Whether a decision settles a job: its gang is placed, or it left the queue for good (a final
 * abort). A resize never does: the gang was placed before it.
 */
export function settles(decision: JobDecision): boolean {
  return decision.type === 'GangCommitted' || (decision.type === 'GangAborted' && decision.final);
}
