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
}

const decoder = new TextDecoder();

/** The inputs of MUSTER_IN from `fromSeq` on, in order; with `tail` it keeps waiting for new ones. */
export async function* readInputs(js: JetStreamClient, opts: OrderedReadOptions = {}): AsyncGenerator<InputMessage, void, undefined> {
  for await (const m of orderedMessages(js, IN_STREAM, opts)) {
    const msgId = m.headers?.get('Nats-Msg-Id');
    const input: InputMessage = { seq: m.seq, subject: m.subject, data: decoder.decode(m.data), size: m.data.length };
    if (msgId !== undefined && msgId !== '') input.msgId = msgId;
    yield input;
  }
}
