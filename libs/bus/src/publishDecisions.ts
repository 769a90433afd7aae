import { ByteScratch, canonicalDigest } from '@muster/core';
import type { Bus } from './bus.ts';
import { ByteArena } from './byteArena.ts';
import { isTimeout } from './isWrongLastSequence.ts';
import { publisherOf } from './jetStreamPublisher.ts';
import type { StreamAck } from './jetStreamPublisher.ts';
import { LOG_SEQ_HEADER } from './names.ts';

/** One message for MUSTER_DECISIONS: a decision, bind or stop derived from the log at `logSeq`. */
export interface DecisionMessage {
  /** `muster.decision.<jobId>`, `muster.bind.<nodeId>` or `muster.stop.<nodeId>`. */
  subject: string;
  /** Sent as canonical JSON. */
  payload: unknown;
  /** `muster:<logSeq>:<index>[:<node>]`: a repeat inside the dedupe window is dropped by the server. */
  msgId: string;
  logSeq: number;
}

/** The outcome of `publishDecisions`: every ack (a `duplicate` one was already there), or the failed indices. */
export type PublishDecisionsResult =
  | { ok: true; acks: StreamAck[] }
  | { ok: false; code: 'timeout' | 'error'; failed: number[]; cause: unknown };

// the decisions of every round are serialised one after another into one reused buffer, each
// copied out into the round's arena with its headers
const scratch = new ByteScratch();
const arenaOf = (arena: ByteArena) => (bytes: Uint8Array): Uint8Array => {
  arena.bytes(bytes);
  return arena.take();
};

/** Publishes decisions pipelined, each with its msg id and a `Muster-Log-Seq` header, and awaits every ack. */
export async function publishDecisions(
  bus: Bus,
  msgs: readonly DecisionMessage[],
  opts: { timeoutMs?: number } = {},
): Promise<PublishDecisionsResult> {
  const publisher = publisherOf(bus);
  const arena = new ByteArena();
  const copy = arenaOf(arena);
  const settled = await publisher.publishRound(
    msgs.map((m) => ({
      subject: m.subject,
      payload: canonicalDigest(m.payload, copy, scratch),
      opts: {
        msgId: m.msgId,
        headers: { [LOG_SEQ_HEADER]: String(m.logSeq) },
        ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      },
    })),
    arena,
  );
  const acks: StreamAck[] = [];
  const failed: number[] = [];
  let cause: unknown;
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') {
      acks.push(s.value);
    } else {
      if (failed.length === 0) cause = s.reason;
      failed.push(i);
    }
  });
  if (failed.length === 0) return { ok: true, acks };
  return { ok: false, code: isTimeout(cause) ? 'timeout' : 'error', failed, cause };
}
