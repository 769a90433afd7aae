import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';

/** Options of `orderedMessages`. */
export interface OrderedReadOptions {
  /** The first stream sequence to deliver (default 1). */
  fromSeq?: number;
  /** Keep delivering new messages after the end (default false: stop at the last sequence at call time). */
  tail?: boolean;
  /** Stops the read (mostly for `tail`). */
  signal?: AbortSignal;
}

// messages per pull request: large enough for fast replay, small enough that a buffer of
// maximum-size messages stays bounded
const BATCH = 512;

/**
 * Every message of `stream` from `fromSeq` on, in order, through an ordered consumer; without
 * `tail` it ends at the stream's last sequence at call time (at once for an empty stream).
 */
export async function* orderedMessages(
  js: JetStreamClient,
  stream: string,
  opts: OrderedReadOptions,
): AsyncGenerator<JsMsg, void, undefined> {
  const fromSeq = opts.fromSeq ?? 1;
  if (!Number.isInteger(fromSeq) || fromSeq < 1) throw new RangeError(`fromSeq must be a positive integer, got ${fromSeq}`);
  if (opts.signal?.aborted === true) return;
  let endSeq = Number.POSITIVE_INFINITY;
  if (opts.tail !== true) {
    // no account-info probe: it needs a meta leader, which a cluster may be electing
    const jsm = await js.jetstreamManager(false);
    endSeq = (await jsm.streams.info(stream)).state.last_seq;
    if (endSeq < fromSeq) return;
  }
  const consumer = await js.consumers.get(stream, { opt_start_seq: fromSeq });
  const messages = await consumer.consume({ max_messages: BATCH });
  const stop = (): void => messages.stop();
  opts.signal?.addEventListener('abort', stop, { once: true });
  // aborted while the consumer was being created: the listener above will never fire
  if (isAborted(opts.signal)) stop();
  try {
    for await (const m of messages) {
      yield m;
      // pending 0 before endSeq: the messages up to endSeq were deleted meanwhile, nothing more to wait for
      if (m.seq >= endSeq || (opts.tail !== true && m.info.pending === 0)) break;
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    messages.stop();
    // the server reaps an abandoned ordered consumer after its inactivity threshold anyway
    await consumer.delete().catch(() => false);
  }
}

// a function, so that the compiler does not carry a narrowing of `aborted` across the awaits above
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
