// The Bus over nats.js v3, and the one way the package's operations reach its connection.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { createInbox } from '@nats-io/transport-node';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { MAX_PAYLOAD_BYTES } from '@muster/core';
import type { Answer, Bus, BusMessage, BusSubscription, SubscribeOptions } from './bus.ts';
import type { ListenerMove } from './listenerMove.ts';

const DEFAULT_TIMEOUT_MS = 5_000;

/** A Bus over one nats.js connection; JetStream calls are bounded by `timeoutMs`. */
export class NatsBus implements Bus {
  /** The JetStream client (API calls and publish acks wait `timeoutMs`). */
  readonly js: JetStreamClient;
  /** The JetStream manager, made without the account-info probe (it needs a meta leader, which a cluster may be electing). */
  readonly jsm: Promise<JetStreamManager>;

  constructor(
    /** The connection. */
    readonly nc: NatsConnection,
    /** The prefix of this connection's reply subjects, as it was connected with. */
    readonly inboxPrefix: string | undefined,
    timeoutMs = DEFAULT_TIMEOUT_MS,
    /** How the connection moves to a server through which a subject's listeners are reached. */
    private readonly listenerMove: ListenerMove,
  ) {
    this.js = jetstream(nc, { timeout: timeoutMs, checkAPI: false });
    this.jsm = jetstreamManager(nc, { timeout: timeoutMs, checkAPI: false });
  }

  subscribe(subject: string, onMessage: (msg: BusMessage) => void, opts: SubscribeOptions = {}): BusSubscription {
    return subscription(
      this.nc.subscribe(subject, {
        ...(opts.queue === undefined ? {} : { queue: opts.queue }),
        callback: (err, msg) => {
          if (err !== null) opts.onError?.(err);
          else onMessage(messageOf(msg));
        },
      }),
    );
  }

  serve(subject: string, answer: Answer, opts: SubscribeOptions = {}): BusSubscription {
    return subscription(
      this.nc.subscribe(subject, {
        ...(opts.queue === undefined ? {} : { queue: opts.queue }),
        callback: (err, msg) => {
          if (err !== null) {
            opts.onError?.(err);
            return;
          }
          // an answer that cannot be sent (larger than the server takes) is reported, never thrown:
          // the requester times out, as with any replica that cannot answer
          const respond = (body: string | Uint8Array): void => {
            try {
              msg.respond(body);
            } catch (respondErr) {
              opts.onError?.(respondErr);
            }
          };
          try {
            const reply = answer(messageOf(msg));
            if (reply instanceof Promise) void reply.then(respond, () => undefined);
            else respond(reply);
          } catch {
            // no answer: the requester times out, as with any replica that cannot answer
          }
        },
      }),
    );
  }

  async request(subject: string, body: string | Uint8Array, opts: { timeoutMs: number }): Promise<BusMessage> {
    return messageOf(await this.nc.request(subject, body, { timeout: opts.timeoutMs }));
  }

  publish(subject: string, body: string | Uint8Array, reply?: string): void {
    this.nc.publish(subject, body, reply === undefined ? undefined : { reply });
  }

  inbox(): string {
    return createInbox(this.inboxPrefix);
  }

  flush(): Promise<void> {
    return this.nc.flush();
  }

  withTimeout(timeoutMs: number): Bus {
    return new NatsBus(this.nc, this.inboxPrefix, timeoutMs, this.listenerMove);
  }

  moveToListener(subject: string, body: string): Promise<string | null> {
    return this.listenerMove.toListener(subject, body);
  }

  maxPayload(): number {
    // the server's default, for a connection that has not heard the server's yet
    return this.nc.info?.max_payload ?? MAX_PAYLOAD_BYTES;
  }

  isClosed(): boolean {
    return this.nc.isClosed();
  }

  drain(): Promise<void> {
    return this.nc.drain();
  }

  close(): Promise<void> {
    return this.nc.close();
  }
}

/** The nats.js side of a Bus, for the package's operations. */
export function natsOf(bus: Bus): NatsBus {
  if (!(bus instanceof NatsBus)) throw new TypeError('not a bus made by connect()');
  return bus;
}

const decoder = new TextDecoder();

/** A nats.js message as a BusMessage. */
export function messageOf(msg: Pick<Msg, 'subject' | 'data'> & { reply?: string; headers?: Msg['headers'] }): BusMessage {
  const text = (): string => decoder.decode(msg.data);
  const reply = msg.reply === undefined || msg.reply === '' ? {} : { reply: msg.reply };
  const noResponders = msg.headers?.code === 503 ? { noResponders: true as const } : {};
  return { subject: msg.subject, data: msg.data, ...reply, ...noResponders, text, json: <T>() => JSON.parse(text()) as T };
}

function subscription(sub: Subscription): BusSubscription {
  return { unsubscribe: () => sub.unsubscribe(), drain: () => sub.drain() };
}
