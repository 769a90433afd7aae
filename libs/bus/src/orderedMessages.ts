import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { BusError } from './busError.ts';
import { StallWatch } from './stallWatch.ts';
import type { Bus } from './bus.ts';
import { natsOf } from './natsBus.ts';
import { streamInfo } from './streamInfo.ts';

/** Options of `orderedMessages`. */
export interface OrderedReadOptions {
  /** The first stream sequence to deliver (default 1). */
  fromSeq?: number;
  /** Keep delivering new messages after the end (default false: stop at the last sequence at call time). */
  tail?: boolean;
  /** Stops the read (mostly for `tail`). */
  signal?: AbortSignal;
}

/** Options of `orderedBatches`: a bulk read up to the stream's last sequence at call time. */
export interface BatchReadOptions {
  /** The first stream sequence to deliver (default 1). */
  fromSeq?: number;
  /** Stops the read. */
  signal?: AbortSignal;
  /** Messages asked for per pull request (default 512); readers of small messages ask for more. */
  batch?: number;
}

// messages per pull request: large enough for fast replay, small enough that a buffer of
// maximum-size messages stays bounded
const BATCH = 512;

// the caller is woken when this many bytes have arrived (or a pull is complete): small messages
// reach it in batches of hundreds, a large transaction at once
const WAKE_BYTES = 64 * 1024;

// a bulk read asks for exactly the messages the stream holds, so a pull ends as soon as they are
// in; this bounds the wait of a pull short of the end (a copy behind, a busy server)
const FETCH_EXPIRES_MS = 5_000;

// pulls in a row (each up to FETCH_EXPIRES_MS) that bring nothing short of the end before a read fails
const MAX_EMPTY_PULLS = 3;
// a pull that neither delivers nor ends within this is stopped, as an empty one: its consumer was
// lost (a replica restarted under faketime waited on its rebuild's read for a minute, a NATS node
// restarting meanwhile)
const FETCH_STALLED_MS = 2 * FETCH_EXPIRES_MS;

/**
 * Every message of `stream` from `fromSeq` on, in order, through an ordered consumer; without
 * `tail` it ends at the stream's last sequence at call time (at once for an empty stream).
 */
export async function* orderedMessages(
  bus: Bus,
  stream: string,
  opts: OrderedReadOptions,
): AsyncGenerator<JsMsg, void, undefined> {
  if (opts.tail !== true) {
    for await (const batch of orderedBatches(bus, stream, opts)) yield* batch;
    return;
  }
  const fromSeq = startSeq(opts.fromSeq);
  if (opts.signal?.aborted === true) return;
  const consumer = await natsOf(bus).js.consumers.get(stream, { opt_start_seq: fromSeq });
  const messages = await consumer.consume({ max_messages: BATCH });
  const stop = (): void => messages.stop();
  opts.signal?.addEventListener('abort', stop, { once: true });
  // aborted while the consumer was being created: the listener above will never fire
  if (isAborted(opts.signal)) stop();
  try {
    for await (const m of messages) yield m;
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    messages.stop();
    // the server reaps an abandoned ordered consumer after its inactivity threshold anyway
    await consumer.delete().catch(() => false);
  }
}

/**
 * Every message of `stream` from `fromSeq` to its last sequence at call time, in order, in arrays
 * of what has arrived since the caller last asked: an ordered consumer pulls `batch` messages at a
 * time ahead of the caller (holding at most two batches), so reading overlaps with what the caller
 * does and the caller pays one await per batch instead of one per message.
 */
export async function* orderedBatches(bus: Bus, stream: string, opts: BatchReadOptions = {}): AsyncGenerator<JsMsg[], void, undefined> {
  const fromSeq = startSeq(opts.fromSeq);
  if (opts.signal?.aborted === true) return;
  const { js } = natsOf(bus);
  const endSeq = (await streamInfo(bus, stream)).lastSeq;
  if (endSeq < fromSeq) return;
  const consumer = await js.consumers.get(stream, { opt_start_seq: fromSeq });
  const reader = new ReadAhead(consumer, endSeq, opts.batch ?? BATCH);
  const stop = (): void => reader.stop();
  opts.signal?.addEventListener('abort', stop, { once: true });
  if (isAborted(opts.signal)) stop();
  try {
    for (;;) {
      const batch = await reader.take();
      if (batch === null) return;
      yield batch;
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    reader.stop();
    await reader.done;
    await consumer.delete().catch(() => false);
  }
}

/** Pulls an ordered consumer's messages up to `endSeq` into a buffer the caller empties batch by batch. */
class ReadAhead {
  readonly done: Promise<void>;
  private buffer: JsMsg[] = [];
  private bufferedBytes = 0;
  // a pull is delivering: a caller waits for WAKE_BYTES or its end rather than take a few messages
  private pulling = false;
  private stopped = false;
  private ended = false;
  private failure: unknown = null;
  private current: ConsumerMessages | null = null;
  private wake: (() => void) | null = null;
  private room: (() => void) | null = null;

  constructor(
    private readonly consumer: Consumer,
    private readonly endSeq: number,
    private readonly batch: number,
  ) {
    this.done = this.run();
  }

  /** What has arrived since the last call (at least WAKE_BYTES, or all a pull brought), or null at the end. */
  async take(): Promise<JsMsg[] | null> {
    for (;;) {
      if (this.buffer.length > 0 && (this.bufferedBytes >= WAKE_BYTES || !this.pulling || this.ended)) {
        const taken = this.buffer;
        this.buffer = [];
        this.bufferedBytes = 0;
        this.signal('room');
        return taken;
      }
      if (this.failure !== null) throw this.failure;
      if (this.ended) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Stops reading (a pull in progress is cancelled). */
  stop(): void {
    this.stopped = true;
    this.current?.stop();
    this.signal('room');
  }

  private async run(): Promise<void> {
    try {
      // the first pull asks for one message, whose `pending` says how many follow: a pull that
      // asks for more than the stream holds would wait until it expires
      let want = 1;
      // the last sequence delivered, and pulls in a row that brought nothing short of the end
      let readTo = 0;
      let emptyPulls = 0;
      while (!this.stopped) {
        // a batch not taken yet: pull the next one only when it is (memory stays bounded)
        if (this.buffer.length >= this.batch) {
          await new Promise<void>((resolve) => (this.room = resolve));
          continue;
        }
        this.pulling = true;
        const current = await this.consumer.fetch({ max_messages: want, expires: FETCH_EXPIRES_MS });
        this.current = current;
        if (this.stopped) current.stop();
        const watch = new StallWatch(FETCH_STALLED_MS, () => current.stop());
        let last: JsMsg | null = null;
        let pastEnd = false;
        try {
          for await (const m of current) {
            watch.heard();
            // a stopped pull still delivers what it had received: leave it
            if (this.stopped) break;
            if (m.seq > this.endSeq) {
              pastEnd = true;
              continue;
            }
            this.buffer.push(m);
            last = m;
            this.bufferedBytes += m.data.length;
            if (this.bufferedBytes >= WAKE_BYTES) this.signal('wake');
          }
        } finally {
          watch.stop();
        }
        this.pulling = false;
        this.signal('wake');
        // a message past the end: every one up to it has been delivered
        if (this.stopped || pastEnd) break;
        if (last !== null) {
          emptyPulls = 0;
          readTo = last.seq;
        }
        if (readTo >= this.endSeq) break;
        if (last === null || last.info.pending === 0) {
          // nothing more now, short of the end: muster's streams never remove a message, so the
          // consumer's copy is behind (an R1 consumer on a NATS node still refilling) or a busy
          // server let the pull expire. The read ended here before, short, as if at the end
          // (the 200 gangs/s drill read 664 of 2,236 transactions); it waits, then fails
          emptyPulls++;
          if (emptyPulls >= MAX_EMPTY_PULLS) {
            throw new BusError('READ_SHORT', `the read got messages up to ${readTo} of ${this.endSeq} and no more in ${MAX_EMPTY_PULLS} pulls`, { seq: readTo });
          }
          want = 1;
          continue;
        }
        want = Math.min(this.batch, last.info.pending);
      }
    } catch (err) {
      this.failure = err;
    }
    this.pulling = false;
    this.ended = true;
    this.signal('wake');
  }

  private signal(which: 'wake' | 'room'): void {
    const resolve = this[which];
    this[which] = null;
    resolve?.();
  }
}

function startSeq(fromSeq = 1): number {
  if (!Number.isInteger(fromSeq) || fromSeq < 1) throw new RangeError(`fromSeq must be a positive integer, got ${fromSeq}`);
  return fromSeq;
}

// a function, so that the compiler does not carry a narrowing of `aborted` across the awaits above
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
