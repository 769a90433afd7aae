import { DeliverPolicy } from '@nats-io/jetstream';
import type { Bus } from './bus.ts';
import { natsOf } from './natsBus.ts';

/** One stored message of a stream as a subject reader gives it. */
export interface StreamMessage {
  /** Its stream sequence. */
  seq: number;
  subject: string;
  data: Uint8Array;
  /** How many messages on the filter subject follow it in the stream, as the server counted on delivery. */
  pending: number;
}

/** Options of `subjectMessages`. */
export interface SubjectReadOptions {
  /**
   * `all` (the default) replays every stored message first; `new` delivers only what arrives later;
   * `last-per-subject` the latest stored message of each subject the filter matches, then what arrives.
   */
  deliver?: 'all' | 'new' | 'last-per-subject';
  /** Start at this stream sequence instead (resuming a read); overrides `deliver`. */
  fromSeq?: number;
  /** Stops the read; the iterator then ends. */
  signal?: AbortSignal;
}

/**
 * Every message of `stream` on one filter subject (wildcards allowed), in order and without end,
 * through an ordered consumer: nats-server 2.9 takes a single filter subject, so this is how a
 * late subscriber finds a decision that was published before it came.
 */
export async function* subjectMessages(
  bus: Bus,
  stream: string,
  filterSubject: string,
  opts: SubjectReadOptions = {},
): AsyncGenerator<StreamMessage, void, undefined> {
  if (opts.signal?.aborted === true) return;
  const start =
    opts.fromSeq !== undefined
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: opts.fromSeq }
      : { deliver_policy: opts.deliver === 'new' ? DeliverPolicy.New : opts.deliver === 'last-per-subject' ? DeliverPolicy.LastPerSubject : DeliverPolicy.All };
  const consumer = await natsOf(bus).js.consumers.get(stream, { filter_subjects: filterSubject, ...start });
  const messages = await consumer.consume({ max_messages: 256 });
  const stop = (): void => messages.stop();
  opts.signal?.addEventListener('abort', stop, { once: true });
  // aborted while the consumer was being created: the listener above will never fire
  if (isAborted(opts.signal)) stop();
  try {
    for await (const m of messages) {
      // stop() ends the iterator, but messages already buffered would still come out
      if (isAborted(opts.signal)) break;
      yield { seq: m.seq, subject: m.subject, data: m.data, pending: m.info.pending };
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    messages.stop();
    // the server reaps an abandoned ordered consumer after its inactivity threshold anyway
    await consumer.delete().catch(() => false);
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
