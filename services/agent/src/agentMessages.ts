import type { BindMessage, BindPart, StopMessage } from '@muster/core';

const decoder = new TextDecoder();

/** Reads a message from `muster.bind.<nodeId>` or `muster.stop.<nodeId>`; null when it is neither. */
export function parseAgentMessage(data: Uint8Array): BindMessage | StopMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const m = value as Record<string, unknown>;
  if (typeof m.jobId !== 'string') return null;
  if (m.type === 'Bind' && typeof m.session === 'number' && Array.isArray(m.parts) && m.parts.every(isPart)) return value as BindMessage;
  if (m.type === 'Stop' && isIntArray(m.members)) return value as StopMessage;
  return null;
}

/**
 * The GPU ids of the member at position `index` of a part: from `memberGpuIds` when the leader
 * sent it, otherwise the part's devices dealt out evenly, member by member.
 */
export function memberGpuIds(part: BindPart, index: number): number[] {
  const own = (part.memberGpuIds as number[][] | undefined)?.[index];
  if (own !== undefined) return own;
  const perMember = part.members.length === 0 ? 0 : Math.floor(part.gpuIds.length / part.members.length);
  return part.gpuIds.slice(index * perMember, (index + 1) * perMember);
}

function isPart(value: unknown): value is BindPart {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return typeof p.role === 'string' && isIntArray(p.members) && isIntArray(p.gpuIds);
}

function isIntArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((v) => Number.isInteger(v) && (v as number) >= 0);
}
