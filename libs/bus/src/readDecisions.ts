import type { JetStreamClient } from '@nats-io/jetstream';
import { DECISIONS_STREAM, LOG_SEQ_HEADER } from './names.ts';
import { orderedMessages } from './orderedMessages.ts';
import type { OrderedReadOptions } from './orderedMessages.ts';

/** One message as stored on MUSTER_DECISIONS. */
export interface StoredDecision {
  /** MUSTER_DECISIONS stream sequence. */
  seq: number;
  subject: string;
  /** `Nats-Msg-Id` (`muster:<logSeq>:<index>[:<node>]`), '' when absent. */
  msgId: string;
  /** The `Muster-Log-Seq` header, or null when absent or not a positive integer. */
  logSeq: number | null;
  /** The body as UTF-8 text. */
  data: string;
}

const decoder = new TextDecoder();

/** Every message of MUSTER_DECISIONS from `fromSeq` on, in stream order, with its msg id and log sequence. */
export async function* readDecisions(js: JetStreamClient, opts: OrderedReadOptions = {}): AsyncGenerator<StoredDecision, void, undefined> {
  for await (const m of orderedMessages(js, DECISIONS_STREAM, opts)) {
    const logSeq = Number(m.headers?.get(LOG_SEQ_HEADER) ?? '');
    yield {
      seq: m.seq,
      subject: m.subject,
      msgId: m.headers?.get('Nats-Msg-Id') ?? '',
      logSeq: Number.isInteger(logSeq) && logSeq > 0 ? logSeq : null,
      data: decoder.decode(m.data),
    };
  }
}
