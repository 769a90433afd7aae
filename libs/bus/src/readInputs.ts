import type { JetStreamClient } from '@nats-io/jetstream';
import { IN_STREAM } from './names.ts';
import { orderedMessages } from './orderedMessages.ts';
import type { OrderedReadOptions } from './orderedMessages.ts';

/** One input as stored in MUSTER_IN; the scheduler validates the body against its subject. */
export interface InputMessage {
  seq: number;
  subject: string;
  /** The body as UTF-8 text. */
  data: string;
  /** The publisher's idempotency key (`Nats-Msg-Id`), if it gave one. */
  msgId?: string;
  /** The body's size in bytes. */
  size: number;
  /** When the stream stored it (ms since the epoch); only with `withTime`. */
  storedAt?: number;
}

/** Options of `readInputs`. */
export interface ReadInputsOptions extends OrderedReadOptions {
  /** Also give each input's stored time (`storedAt`). */
  withTime?: boolean;
}

const decoder = new TextDecoder();

/** The inputs of MUSTER_IN from `fromSeq` on, in order; with `tail` it keeps waiting for new ones, with `withTime` each says when it was stored. */
export async function* readInputs(js: JetStreamClient, opts: ReadInputsOptions = {}): AsyncGenerator<InputMessage, void, undefined> {
  for await (const m of orderedMessages(js, IN_STREAM, opts)) {
    const msgId = m.headers?.get('Nats-Msg-Id');
    const input: InputMessage = { seq: m.seq, subject: m.subject, data: decoder.decode(m.data), size: m.data.length };
    if (msgId !== undefined && msgId !== '') input.msgId = msgId;
    if (opts.withTime === true) input.storedAt = m.time.getTime();
    yield input;
  }
}
