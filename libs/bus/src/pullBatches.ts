import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { createInbox, nanos, nuid } from '@nats-io/transport-node';
import type { Msg } from '@nats-io/transport-node';
import type { Bus } from './bus.ts';
import { BusError } from './busError.ts';
import { StallWatch } from './stallWatch.ts';
import { DECISIONS_STREAM, IN_STREAM, LOG_STREAM } from './names.ts';
import { natsOf } from './natsBus.ts';
import type { BatchReadOptions } from './orderedMessages.ts';
import { parseTransaction } from './parseTransaction.ts';
import type { LogEntry } from './readLogEntries.ts';
import { inputOf } from './readInputs.ts';
import type { InputMessage } from './readInputs.ts';
import { decisionOf } from './readDecisions.ts';
import type { StoredDecision } from './readDecisions.ts';

// The caller is woken when this many bytes have arrived, or a pull is complete.
const WAKE_BYTES = 64 * 1024;
const BATCH = 4096;
// log messages are large (up to MAX_TRANSACTION_BYTES): few per pull. Two pulls of 512 sessions
// of a 200-gangs/s log (hundreds of kB each) were hundreds of MB on their way to a caller busy
// re-deriving: nats-server cut the connection as a slow consumer (over its 64 MB pending), the
// messages in flight were lost, and the read waited for them for good
const LOG_BATCH = 16;
// a pull asks for messages the stream holds, so it ends as soon as they are in; this bounds only
// the wait for messages removed from the stream while it is read
const PULL_EXPIRES_MS = 5_000;
// a pull outstanding this long with no answer (not even the status of its expiry) is answered by
// nobody: the consumer is gone
const PULL_STALLED_MS = 2 * PULL_EXPIRES_MS;
// how long the consumer outlives a caller that stops asking (it is deleted at the end anyway): a
// caller may be busy longer than 30 s between batches (an audit's stretch of big sessions), and a
// reaped consumer answers no pull
const CONSUMER_IDLE_MS = 600_000;

/**
 * `readInputBatches` without msg ids, through `pullBatches`: the same inputs in the same batches
 * shape, for bulk readers of many small messages (the audit).
 */
export async function* pullInputBatches(bus: Bus, opts: BatchReadOptions = {}): AsyncGenerator<InputMessage[], void, undefined> {
  for await (const batch of pullBatches(bus, IN_STREAM, opts)) {
    const out = new Array<InputMessage>(batch.length);
    for (let i = 0; i < batch.length; i++) out[i] = inputOf(batch[i]!.seq, batch[i]!.msg, { withMsgId: false });
    yield out;
  }
}

/** `readDecisionBatches` through `pullBatches`: the same messages, with msg ids and log sequences (and their bodies as stored, `withBytes`). */
export async function* pullDecisionBatches(bus: Bus, opts: BatchReadOptions & { withBytes?: boolean } = {}): AsyncGenerator<StoredDecision[], void, undefined> {
  const withBytes = opts.withBytes ?? false;
  for await (const batch of pullBatches(bus, DECISIONS_STREAM, opts)) {
    const out = new Array<StoredDecision>(batch.length);
    for (let i = 0; i < batch.length; i++) out[i] = decisionOf(batch[i]!.seq, batch[i]!.msg, withBytes);
    yield out;
  }
}

/** `readLogEntries` (from `fromSeq` to the last sequence at call time) through `pullBatches`. */
export async function* pullLogEntries(bus: Bus, opts: BatchReadOptions = {}): AsyncGenerator<LogEntry, void, undefined> {
  for await (const batch of pullBatches(bus, LOG_STREAM, { batch: LOG_BATCH, ...opts })) {
    for (const { seq, msg } of batch) yield { seq, tx: parseTransaction(msg.data, seq), payload: msg.data };
  }
}

/** A stream message as `pullBatches` gives it: its stream sequence and the core message. */
export interface PulledMessage {
  seq: number;
  msg: Msg;
}

/**
 * Every message of `stream` from `fromSeq` to its last sequence at call time, in order, in arrays
 * of what has arrived since the caller last asked. Unlike `orderedBatches` it reads with a plain
 * pull consumer of its own (no acks, in memory, deleted at the end or reaped by the server) through
 * a core subscription: no JetStream message wrappers, no per-message consumer bookkeeping, the
 * stream sequence read from the reply subject. Two pulls of `batch` messages are kept outstanding,
 * so the server sends while the caller works. A read that ends short (messages removed meanwhile)
 * just ends.
 */
export async function* pullBatches(bus: Bus, stream: string, opts: BatchReadOptions = {}): AsyncGenerator<PulledMessage[], void, undefined> {
  const fromSeq = opts.fromSeq ?? 1;
  if (!Number.isInteger(fromSeq) || fromSeq < 1) throw new RangeError(`fromSeq must be a positive integer, got ${fromSeq}`);
  if (opts.signal?.aborted === true) return;
  const { nc, inboxPrefix, jsm: manager } = natsOf(bus);
  const jsm = await manager;
  const endSeq = (await jsm.streams.info(stream)).state.last_seq;
  if (endSeq < fromSeq) return;
  const name = `muster_pull_${nuid.next()}`;
  const info = await jsm.consumers.add(stream, {
    name,
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: fromSeq,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: nanos(CONSUMER_IDLE_MS),
  });
  const batchSize = opts.batch ?? BATCH;
  let buffer: PulledMessage[] = [];
  let bufferedBytes = 0;
  let wake: (() => void) | null = null;
  let ended = false;
  let failure: unknown = null;
  // messages not asked for yet: the consumer's pending at creation, as far as endSeq
  let toAsk = Math.min(info.num_pending, endSeq - fromSeq + 1);
  // the running count of messages at which each outstanding pull is complete
  const pulls: number[] = [];
  let asked = 0;
  let received = 0;
  // the last sequence received
  let lastSeq = fromSeq - 1;
  const signal = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  const finish = (err?: unknown): void => {
    if (err !== undefined && failure === null) failure = err;
    ended = true;
    signal();
  };
  // a restricted user may subscribe only below its own inbox prefix
  const inbox = createInbox(inboxPrefix);
  const subject = `$JS.API.CONSUMER.MSG.NEXT.${stream}.${name}`;
  // at most two pulls outstanding, and none while a batch waits for the caller: memory stays bounded
  const pull = (): void => {
    while (!ended && toAsk > 0 && pulls.length < 2 && buffer.length < batchSize) {
      const n = Math.min(batchSize, toAsk);
      toAsk -= n;
      asked += n;
      if (pulls.length === 0) watch.heard();
      pulls.push(asked);
      nc.publish(subject, JSON.stringify({ batch: n, expires: nanos(PULL_EXPIRES_MS) }), { reply: inbox });
    }
  };
  const sub = nc.subscribe(inbox, {
    callback: (err, msg) => {
      if (ended) return;
      watch.heard();
      if (err !== null) {
        finish(err);
        return;
      }
      const seq = streamSeqOf(msg.reply);
      if (seq === null) {
        // a status (no messages, request expired): the oldest pull is over, whatever it brought
        pulls.shift();
        if (pulls.length === 0 && toAsk === 0) finish();
        else pull();
        return;
      }
      if (seq > endSeq) return;
      buffer.push({ seq, msg });
      lastSeq = seq;
      bufferedBytes += msg.data.length;
      received++;
      // the last sequence at call time is in, or all that was asked for
      if (seq >= endSeq || (toAsk === 0 && received >= asked)) {
        finish();
        return;
      }
      if (pulls.length > 0 && received >= pulls[0]!) {
        pulls.shift();
        signal();
        pull();
      } else if (bufferedBytes >= WAKE_BYTES) {
        signal();
      }
    },
  });
  const stop = (): void => finish();
  opts.signal?.addEventListener('abort', stop, { once: true });
  // a closed connection ends the subscription without a word to its callback
  void nc.closed().then((err) => finish(err ?? new Error(`the connection closed while ${stream} was read`)));
  // a pull nobody answers would be waited on for ever (StallWatch)
  const watch = new StallWatch(
    PULL_STALLED_MS,
    () => finish(new BusError('READ_STALLED', `reading ${stream}: a pull went unanswered for ${PULL_STALLED_MS} ms after sequence ${lastSeq} (its consumer ${name} is gone)`)),
    () => !ended && pulls.length > 0,
  );
  try {
    if (toAsk === 0) return;
    pull();
    for (;;) {
      if (buffer.length > 0) {
        const out = buffer;
        buffer = [];
        bufferedBytes = 0;
        pull();
        yield out;
        continue;
      }
      if (failure !== null) throw failure;
      if (ended || isAborted(opts.signal)) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    watch.stop();
    opts.signal?.removeEventListener('abort', stop);
    ended = true;
    sub.unsubscribe();
    // the server reaps it after its inactivity threshold anyway
    await jsm.consumers.delete(stream, name).catch(() => false);
  }
}

// a function, so that the compiler does not carry a narrowing of `aborted` across the awaits above
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * The stream sequence in a JetStream message's reply subject
 * (`$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>`, or with
 * domain and account hash after `$JS.ACK`, and a token more at the end), null for a status message.
 */
export function streamSeqOf(reply: string | undefined): number | null {
  if (reply === undefined || !reply.startsWith('$JS.ACK.')) return null;
  // found by its dots rather than by splitting: a bulk read made an array of ten strings a message
  let dots = 0;
  let dot4 = -1;
  let dot5 = -1;
  let dot6 = -1;
  let dot7 = -1;
  for (let i = reply.indexOf('.'); i !== -1; i = reply.indexOf('.', i + 1)) {
    if (dots === 4) dot4 = i;
    else if (dots === 5) dot5 = i;
    else if (dots === 6) dot6 = i;
    else if (dots === 7) dot7 = i;
    dots++;
  }
  // token k lies between dot k - 1 and dot k; there are dots + 1 tokens
  const seq = dots === 8 ? reply.slice(dot4 + 1, dot5) : dots >= 10 ? reply.slice(dot6 + 1, dot7) : undefined;
  const n = seq === undefined ? Number.NaN : Number(seq);
  return Number.isInteger(n) && n > 0 ? n : null;
}
