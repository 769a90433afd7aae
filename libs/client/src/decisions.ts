import type { Decision } from '@muster/core';

const decoder = new TextDecoder();

/** Reads a `muster.decision.<jobId>` message body; null when it is not a gang decision. */
export function parseDecision(data: Uint8Array): Decision | null {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const d = value as { type?: unknown; jobId?: unknown };
  if ((d.type !== 'GangCommitted' && d.type !== 'GangAborted') || typeof d.jobId !== 'string') return null;
  return value as Decision;
}

/** Whether a decision settles a job: its gang is placed, or it left the queue for good (a final abort). */
export function settles(decision: Decision): boolean {
  return decision.type === 'GangCommitted' || decision.final;
}
