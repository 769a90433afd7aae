import type { JsMsg } from '@nats-io/jetstream';
import type { Msg } from '@nats-io/transport-node';
import { IN_STREAM } from './names.ts';
import { orderedBatches, orderedMessages } from './orderedMessages.ts';
import type { BatchReadOptions, OrderedReadOptions } from './orderedMessages.ts';
import type { Bus } from './bus.ts';

/** One input as stored in MUSTER_IN; the scheduler validates the body against its subject. */
export interface InputMessage {
  seq: number;
  subject: string;
  /** The body as UTF-8 text. */
  data: string;
  /** The publisher's idempotency key (`Nats-Msg-Id`), if it gave one (left out with `withMsgId: false`). */
  msgId?: string;
  /** The body's size in bytes. */
  size: number;
  /** When the stream stored it (ms since the epoch); only with `withTime`. */
  storedAt?: number;
  /** How many messages the stream held after it when it was delivered (-1: not known); only with `withTime`. */
  pendingAfter?: number;
}

/** What `readInputs` and `readInputBatches` give besides sequence, subject and body. */
export interface InputFields {
  /** Also give each input's stored time (`storedAt`) and what followed it (`pendingAfter`). */
  withTime?: boolean;
  /** Give each input's `msgId` (default true; decoding the headers is most of the cost of a small input). */
  withMsgId?: boolean;
}

/** Options of `readInputs`. */
export interface ReadInputsOptions extends OrderedReadOptions, InputFields {}

/** Options of `readInputBatches`. */
export interface ReadInputBatchesOptions extends BatchReadOptions, InputFields {}

// inputs are small: many per pull request
const INPUT_BATCH = 4096;

const decoder = new TextDecoder();

/** The inputs of MUSTER_IN from `fromSeq` on, in order; with `tail` it keeps waiting for new ones, with `withTime` each says when it was stored. */
export async function* readInputs(bus: Bus, opts: ReadInputsOptions = {}): AsyncGenerator<InputMessage, void, undefined> {
  if (opts.tail !== true) {
    for await (const batch of readInputBatches(bus, opts)) yield* batch;
    return;
  }
  for await (const m of orderedMessages(bus, IN_STREAM, opts)) yield timedInputOf(m, opts);
}

/** The inputs of MUSTER_IN from `fromSeq` to its last sequence at call time, in order, a batch (what has arrived) at a time. */
export async function* readInputBatches(bus: Bus, opts: ReadInputBatchesOptions = {}): AsyncGenerator<InputMessage[], void, undefined> {
  for await (const batch of orderedBatches(bus, IN_STREAM, { batch: INPUT_BATCH, ...opts })) {
    const inputs: InputMessage[] = new Array<InputMessage>(batch.length);
    for (let i = 0; i < batch.length; i++) inputs[i] = timedInputOf(batch[i]!, opts);
    yield inputs;
  }
}

/** A message of MUSTER_IN at stream sequence `seq` (a JetStream or a core message), decoded; with its msg id unless told otherwise. */
export function inputOf(seq: number, m: Pick<Msg, 'subject' | 'data' | 'headers'>, opts: Pick<InputFields, 'withMsgId'>): InputMessage {
  const input: InputMessage = { seq, subject: m.subject, data: decoder.decode(m.data), size: m.data.length };
  if (opts.withMsgId !== false) {
    const msgId = m.headers?.get('Nats-Msg-Id');
    if (msgId !== undefined && msgId !== '') input.msgId = msgId;
  }
  return input;
}

function timedInputOf(m: JsMsg, opts: InputFields): InputMessage {
  const input = inputOf(m.seq, m, opts);
  if (opts.withTime === true) {
    input.storedAt = m.time.getTime();
    input.pendingAfter = m.info.pending;
  }
  return input;
}
