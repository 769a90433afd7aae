import { subjects } from '@muster/bus';
import type { InputMessage } from '@muster/bus';
import type { LoggedTransaction } from '@muster/core';

/** A submission and the MUSTER_IN sequence JetStream acknowledged it at (unknown when only a retry's `duplicate` answer said it landed). */
export interface AckedSubmission {
  id: string;
  inputSeq?: number;
}

/** What MUSTER_IN and the log say of the sequences submissions were acknowledged at. */
export interface InputLoss {
  /** One line per submission that is not where it was acknowledged: on MUSTER_IN as read at the end, or in the log's ingest. */
  examples: string[];
  count: number;
  /** The lowest MUSTER_IN sequence of these findings (0 when none): ingest re-derivations from it on read a stream that changed. */
  fromSeq: number;
}

/**
 * Checks every submission against the sequence JetStream acknowledged it at: MUSTER_IN, read at
 * the end, must hold that job's submission there, and the log's `JobSubmitted` of it must name that
 * input. Either failing means the input stream was not what it acknowledged: a message lost or
 * written over (a stream copy that diverged under a partition, as nats-server 2.9.10's do), or an
 * input read under the wrong sequence. An auditor re-deriving an ingest from such a stream gets
 * another job than the leader read: those divergences follow from this, not from the core.
 */
export function checkInputLoss(acked: Iterable<AckedSubmission>, inputs: readonly InputMessage[], log: readonly LoggedTransaction[]): InputLoss {
  const bySeq = new Map<number, InputMessage>();
  for (const input of inputs) bySeq.set(input.seq, input);
  const ingestedAt = new Map<string, number>();
  for (const { tx } of log) {
    for (const event of tx.events) if (event.type === 'JobSubmitted' && !ingestedAt.has(event.job.id)) ingestedAt.set(event.job.id, event.inputSeq);
  }
  const found: { seq: number; line: string }[] = [];
  for (const { id, inputSeq } of acked) {
    if (inputSeq === undefined) continue;
    const held = bySeq.get(inputSeq);
    const heldId = held === undefined ? null : submissionId(held);
    if (heldId !== id) {
      const what = held === undefined ? 'nothing' : heldId === null ? `a message on ${held.subject}` : `job ${heldId}`;
      found.push({ seq: inputSeq, line: `${id}: acknowledged at MUSTER_IN ${inputSeq}, where MUSTER_IN now holds ${what}` });
    }
    const ingested = ingestedAt.get(id);
    if (ingested !== undefined && ingested !== inputSeq) {
      found.push({ seq: Math.min(ingested, inputSeq), line: `${id}: acknowledged at MUSTER_IN ${inputSeq}, ingested by the log as input ${ingested}` });
    }
  }
  found.sort((a, b) => a.seq - b.seq);
  return { examples: found.slice(0, 10).map((f) => f.line), count: found.length, fromSeq: found[0]?.seq ?? 0 };
}

// the job id of a submission (null for anything else)
function submissionId(input: InputMessage): string | null {
  if (input.subject !== subjects.submit) return null;
  try {
    const id = (JSON.parse(input.data) as { id?: unknown }).id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}
