import { canonicalHash } from '@muster/core';

/**
 * The `Nats-Msg-Id` of a submission (DESIGN.md §2): the job id plus the first 12 hex digits of the
 * SHA-256 of the spec's canonical JSON, so a repeat is dropped and a corrected spec is not.
 */
export function submitMsgId(jobId: string, spec: unknown): string {
  return `${jobId}:${canonicalHash(spec).slice(0, 12)}`;
}
