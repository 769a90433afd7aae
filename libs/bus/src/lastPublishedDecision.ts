import type { Bus } from './bus.ts';
import { BusError } from './busError.ts';
import { DECISIONS_STREAM, LOG_SEQ_HEADER } from './names.ts';
import { natsOf } from './natsBus.ts';

/** The last message on MUSTER_DECISIONS: its stream sequence, msg id, the log sequence it came from, its subject and body. */
export interface PublishedDecision {
  streamSeq: number;
  logSeq: number;
  msgId: string;
  subject: string;
  /** The body as UTF-8 text (canonical JSON). */
  data: string;
}

const decoder = new TextDecoder();

/**
 * The last message published on MUSTER_DECISIONS, or null when there is none: a new leader
 * re-publishes what follows it (decisions are published in log order).
 */
export async function lastPublishedDecision(bus: Bus): Promise<PublishedDecision | null> {
  const jsm = await natsOf(bus).jsm;
  const last = (await jsm.streams.info(DECISIONS_STREAM)).state.last_seq;
  if (last === 0) return null;
  const sm = await jsm.streams.getMessage(DECISIONS_STREAM, { seq: last });
  if (sm === null) return null;
  const logSeq = Number(sm.header.get(LOG_SEQ_HEADER));
  if (!Number.isInteger(logSeq) || logSeq < 1) {
    throw new BusError('BAD_MESSAGE', `${DECISIONS_STREAM} sequence ${sm.seq} has no valid ${LOG_SEQ_HEADER} header`, { seq: sm.seq });
  }
  return { streamSeq: sm.seq, logSeq, msgId: sm.header.get('Nats-Msg-Id'), subject: sm.subject, data: decoder.decode(sm.data) };
}

/** The `Muster-Log-Seq` of the last message on MUSTER_DECISIONS, 0 when there is none. */
export async function lastPublishedLogSeq(bus: Bus): Promise<number> {
  return (await lastPublishedDecision(bus))?.logSeq ?? 0;
}
