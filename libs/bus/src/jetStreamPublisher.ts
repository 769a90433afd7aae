import { JetStreamApiError } from '@nats-io/jetstream';
import { createInbox, headers, MsgHdrsImpl, NoRespondersError, TimeoutError } from '@nats-io/transport-node';
import type { Msg, MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import type { Bus } from './bus.ts';
import type { ByteArena } from './byteArena.ts';
import { natsOf } from './natsBus.ts';

/** A stream's acknowledgement of a stored message: where it is, and whether it was there already (same msg id). */
export interface StreamAck {
  stream: string;
  seq: number;
  duplicate: boolean;
  domain?: string;
}

/** Pipelined JetStream publishes of one connection. */
export interface StreamPublisher {
  /** Publishes one message to a stream's subject and resolves with the stream's ack. */
  publish(subject: string, payload: Uint8Array, opts?: PublishOptions): Promise<StreamAck>;
}

/** Options of one publish: the msg id (deduplication), extra headers, the ack timeout. */
export interface PublishOptions {
  msgId?: string;
  headers?: Readonly<Record<string, string>>;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const SWEEP_MS = 100;
const DECODER = new TextDecoder();

/** Where a publish's outcome goes: its own promise's functions, or its place in a round. */
interface Pending {
  resolve: ((ack: StreamAck) => void) | null;
  reject: ((err: Error) => void) | null;
  round: Round | null;
  index: number;
  deadline: number;
}

/** One message of a round (`publishRound`). */
export interface RoundMessage {
  subject: string;
  payload: Uint8Array;
  opts: PublishOptions;
}

/** The outcomes of a round's messages, in order; resolves once every one is known. */
class Round {
  readonly results: PromiseSettledResult<StreamAck>[];
  private left: number;
  private finish: (results: PromiseSettledResult<StreamAck>[]) => void = () => undefined;
  readonly done: Promise<PromiseSettledResult<StreamAck>[]>;

  constructor(size: number) {
    this.results = new Array<PromiseSettledResult<StreamAck>>(size);
    this.left = size;
    this.done = new Promise((resolve) => (this.finish = resolve));
    if (size === 0) this.finish(this.results);
  }

  put(index: number, result: PromiseSettledResult<StreamAck>): void {
    this.results[index] = result;
    if (--this.left === 0) this.finish(this.results);
  }
}

/**
 * JetStream publishes of one connection whose acks all come back on one wildcard inbox, matched by
 * the last token of the reply subject; timeouts are found by one periodic sweep. What `js.publish`
 * does per message instead (a request object, a timer, and on success a `RequestError` built for
 * the cancellation of a request that did not fail) was a sixth of the leader's time per decision.
 * A failed publish rejects with what nats.js would (see `isWrongLastSequence`, `isTimeout`, `isNoResponders`).
 */
export class JetStreamPublisher implements StreamPublisher {
  private readonly prefix: string;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly nc: NatsConnection,
    inboxPrefix?: string,
  ) {
    this.prefix = `${createInbox(inboxPrefix)}.`;
    nc.subscribe(`${this.prefix}*`, { callback: (_err, msg) => this.settle(msg) });
  }

  /** Publishes one message to a stream's subject and resolves with the stream's ack. */
  publish(subject: string, payload: Uint8Array, opts: PublishOptions = {}): Promise<StreamAck> {
    const h = natsHeaders(opts);
    return new Promise<StreamAck>((resolve, reject) => {
      this.send(subject, payload, h, { resolve, reject, round: null, index: 0, deadline: performance.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) });
    });
  }

  /**
   * Publishes messages as `publish` does, headers encoded in `arena`, and resolves with every
   * outcome in order (what `Promise.allSettled` of their publishes gives), without a promise per
   * message: a round of decisions is hundreds of them.
   */
  publishRound(msgs: readonly RoundMessage[], arena: ByteArena): Promise<PromiseSettledResult<StreamAck>[]> {
    const round = new Round(msgs.length);
    const now = performance.now();
    for (let index = 0; index < msgs.length; index++) {
      const { subject, payload, opts } = msgs[index]!;
      this.send(subject, payload, encodedHeaders(opts, arena), { resolve: null, reject: null, round, index, deadline: now + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) });
    }
    return round.done;
  }

  /** Publishes one message with its ack inbox; its outcome goes to `waiting` (at once if the publish throws). */
  private send(subject: string, payload: Uint8Array, h: MsgHdrs, waiting: Pending): void {
    const id = this.next++;
    this.pending.set(id, waiting);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS);
    try {
      this.nc.publish(subject, payload, { reply: `${this.prefix}${id}`, headers: h });
    } catch (err) {
      this.pending.delete(id);
      failed(waiting, err instanceof Error ? err : new Error(String(err)));
    }
  }

  private settle(msg: Msg): void {
    const id = Number(msg.subject.slice(this.prefix.length));
    const waiting = this.pending.get(id);
    if (waiting === undefined) return; // timed out already
    this.pending.delete(id);
    let ack: StreamAck;
    try {
      ack = parseAck(msg);
    } catch (err) {
      failed(waiting, err as Error);
      return;
    }
    if (waiting.round !== null) waiting.round.put(waiting.index, { status: 'fulfilled', value: ack });
    else waiting.resolve?.(ack);
  }

  private sweep(): void {
    const now = performance.now();
    for (const [id, waiting] of this.pending) {
      if (waiting.deadline > now) continue;
      this.pending.delete(id);
      failed(waiting, new TimeoutError());
    }
    if (this.pending.size === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }
}

function failed(waiting: Pending, err: Error): void {
  if (waiting.round !== null) waiting.round.put(waiting.index, { status: 'rejected', reason: err });
  else waiting.reject?.(err);
}

/**
 * Headers whose bytes were written once, as nats.js writes them (`NATS/1.0`, then `key: value`
 * lines in order, then a blank line): what `set` and `encode` cost per message (validating each
 * key twice, a string per line, an encoder call) was a tenth of what the leader allocated per
 * decision. They read like any headers; a publish only takes their bytes.
 */
class EncodedHeaders extends MsgHdrsImpl {
  constructor(
    entries: readonly (readonly [string, string])[],
    private readonly bytes: Uint8Array,
  ) {
    super();
    for (const [k, v] of entries) this.headers.set(k, [v]);
  }

  override encode(): Uint8Array {
    return this.bytes;
  }
}

// header names checked once (nats.js's rule: printable ASCII without a colon)
const checkedKeys = new Set<string>(['Nats-Msg-Id']);
const HEADER_KEY = /^[!-9;-~]+$/;
const HEADER_VALUE_BREAK = /[\r\n]/;
const MSG_ID = 'Nats-Msg-Id';

/** The headers of one publish: a msg id, then the caller's, each once; written in `arena`. */
function encodedHeaders(opts: PublishOptions, arena: ByteArena): MsgHdrs {
  const entries: [string, string][] = [];
  if (opts.msgId !== undefined) entries.push([MSG_ID, opts.msgId]);
  if (opts.headers !== undefined) {
    for (const k in opts.headers) {
      // a repeated name replaces the value before it (as `set` does): leave that to nats.js
      if (!checkedKeys.has(k) && !HEADER_KEY.test(k)) return natsHeaders(opts);
      if (k === MSG_ID && opts.msgId !== undefined) return natsHeaders(opts);
      checkedKeys.add(k);
      entries.push([k, opts.headers[k]!]);
    }
  }
  if (entries.length === 0) return natsHeaders(opts);
  // a value nats.js refuses: let it throw as it does
  for (const entry of entries) if (HEADER_VALUE_BREAK.test(entry[1])) return natsHeaders(opts);
  arena.text('NATS/1.0');
  for (const entry of entries) {
    entry[1] = entry[1].trim();
    arena.text(`\r\n${entry[0]}: ${entry[1]}`);
  }
  arena.text('\r\n\r\n');
  return new EncodedHeaders(entries, arena.take());
}

/** The headers of one publish, made by nats.js (it validates them, and throws as it does). */
function natsHeaders(opts: PublishOptions): MsgHdrs {
  const h = headers();
  if (opts.msgId !== undefined) h.set(MSG_ID, opts.msgId);
  if (opts.headers !== undefined) for (const [k, v] of Object.entries(opts.headers)) h.set(k, v);
  return h;
}

function parseAck(msg: Msg): StreamAck {
  if (msg.data.length === 0 && msg.headers?.code === 503) throw new NoRespondersError(msg.subject);
  const reply = JSON.parse(DECODER.decode(msg.data)) as {
    stream?: string;
    seq?: number;
    duplicate?: boolean;
    domain?: string;
    error?: { code: number; err_code: number; description: string };
  };
  if (reply.error !== undefined) throw new JetStreamApiError(reply.error);
  if (typeof reply.stream !== 'string' || reply.stream === '' || typeof reply.seq !== 'number') throw new Error('invalid JetStream ack');
  const ack: StreamAck = { stream: reply.stream, seq: reply.seq, duplicate: reply.duplicate === true };
  if (reply.domain !== undefined) ack.domain = reply.domain;
  return ack;
}

const PUBLISHERS = new WeakMap<NatsConnection, JetStreamPublisher>();

/** The publisher of a bus's connection (made on first use: one ack subscription per connection). */
export function jetStreamPublisher(bus: Bus): StreamPublisher {
  return publisherOf(bus);
}

/** The same publisher, with the package's own calls (`publishRound`, headers in an arena). */
export function publisherOf(bus: Bus): JetStreamPublisher {
  const { nc, inboxPrefix } = natsOf(bus);
  let publisher = PUBLISHERS.get(nc);
  if (publisher === undefined) {
    publisher = new JetStreamPublisher(nc, inboxPrefix);
    PUBLISHERS.set(nc, publisher);
  }
  return publisher;
}
