// What tests and benchmarks do to a server besides muster's operations (look at a stored message,
// purge or cut a stream, publish a forged or a raw message, count consumers), on a nats.js
// connection of their own: the only place outside libs/bus that holds one.
import { StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';

/** One stored message of a stream, as a test reads it. */
export interface StoredMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  /** A header's value ('' when absent). */
  header(name: string): string;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body parsed as JSON. */
  json<T = unknown>(): T;
}

/** What a stream holds, in the JetStream API's field names. */
export interface RawStreamState {
  messages: number;
  bytes: number;
  first_seq: number;
  last_seq: number;
}

/** A raw JetStream publish: what a misbehaving writer could send. */
export interface RawPublishOptions {
  msgId?: string;
  expectLastSeq?: number;
  expectLastMsgId?: string;
  headers?: Record<string, string>;
}

/** A test's own nats.js connection for inspecting and tampering with streams. */
export class NatsAdmin {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  /** Connects to `servers` (as `user`, when given). */
  static async connect(servers: string | string[], auth: { user?: string; pass?: string; inboxPrefix?: string } = {}): Promise<NatsAdmin> {
    const nc = await connect({ servers, name: 'muster-test-admin', ...auth });
    return new NatsAdmin(nc, jetstream(nc), await jetstreamManager(nc, { checkAPI: false }));
  }

  /** The message at `seq` of `stream`, or null when there is none. */
  async message(stream: string, seq: number): Promise<StoredMessage | null> {
    const m = await this.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m === null) return null;
    return { seq: m.seq, subject: m.subject, data: m.data, header: (name) => m.header.get(name), text: () => m.string(), json: <T>() => m.json<T>() };
  }

  /** The configuration `stream` has on the server, and what it holds (the JetStream API's own field names). */
  async streamInfo(stream: string): Promise<{ config: Record<string, unknown>; state: RawStreamState; cluster: { leader?: string; replicas?: unknown[] } | null }> {
    const info = await this.jsm.streams.info(stream);
    return { config: { ...info.config }, state: { ...info.state }, cluster: info.cluster ?? null };
  }

  /** Publishes straight to a stream's subject, with the expectations given; resolves with the stream's ack. */
  async publish(subject: string, data: string | Uint8Array, opts: RawPublishOptions = {}): Promise<{ stream: string; seq: number; duplicate: boolean }> {
    const expect = {
      ...(opts.expectLastSeq === undefined ? {} : { lastSequence: opts.expectLastSeq }),
      ...(opts.expectLastMsgId === undefined ? {} : { lastMsgID: opts.expectLastMsgId }),
    };
    const ack = await this.js.publish(subject, data, {
      ...(opts.msgId === undefined ? {} : { msgID: opts.msgId }),
      ...(Object.keys(expect).length === 0 ? {} : { expect }),
    });
    return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
  }

  /** Sends a core request (a JetStream API call spelled by hand, say) and resolves with the reply. */
  async request(subject: string, body: string, opts: { timeoutMs: number }): Promise<{ text(): string; json<T = unknown>(): T }> {
    const reply = await this.nc.request(subject, body, { timeout: opts.timeoutMs });
    return { text: () => reply.string(), json: <T>() => reply.json<T>() };
  }

  /** Subscribes to `subject` and resolves with its first message's subject, or rejects with the subscription's error (a permissions violation). */
  async firstOn(subject: string): Promise<string> {
    const sub = this.nc.subscribe(subject, { max: 1 });
    const first = await sub[Symbol.asyncIterator]().next();
    if (first.done === true) throw new Error(`the subscription to ${subject} ended`);
    return first.value.subject;
  }

  /** A consumer's progress, in the JetStream API's field names. */
  async consumerInfo(stream: string, name: string): Promise<{ num_pending: number; delivered: { consumer_seq: number }; push_bound?: boolean }> {
    const info = await this.jsm.consumers.info(stream, name);
    return { num_pending: info.num_pending, delivered: { consumer_seq: info.delivered.consumer_seq }, ...(info.push_bound === undefined ? {} : { push_bound: info.push_bound }) };
  }

  /** Creates a file stream of `subjects` (a benchmark's or a test's own, beside muster's). */
  async createStream(name: string, subjects: string[]): Promise<void> {
    await this.jsm.streams.add({ name, subjects, storage: StorageType.File });
  }

  /** Deletes a stream and its messages. */
  async deleteStream(name: string): Promise<void> {
    await this.jsm.streams.delete(name);
  }

  /** Removes every message of `stream`. */
  async purge(stream: string): Promise<void> {
    await this.jsm.streams.purge(stream);
  }

  /** Removes one message of `stream` (its sequence stays used). */
  async deleteMessage(stream: string, seq: number): Promise<void> {
    await this.jsm.streams.deleteMessage(stream, seq);
  }

  /** Deletes every consumer of `stream` (as the server does with one idle past its inactivity threshold). */
  async deleteConsumers(stream: string): Promise<number> {
    const names: string[] = [];
    for await (const c of this.jsm.consumers.list(stream)) names.push(c.name);
    for (const name of names) await this.jsm.consumers.delete(stream, name);
    return names.length;
  }

  /** How many consumers `stream` has. */
  async consumerCount(stream: string): Promise<number> {
    let n = 0;
    for await (const _ of this.jsm.consumers.list(stream)) n++;
    return n;
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.nc.close();
  }
}
