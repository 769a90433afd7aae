// muster's handle on NATS: the operations on core NATS subjects, in muster's own types. The
// stream operations (append, tail, inputs, decisions, lease, snapshots) are functions of the
// package that take a Bus; only libs/bus reaches the nats.js connection behind it.

/** A message on a core NATS subject as muster reads it. */
export interface BusMessage {
  subject: string;
  data: Uint8Array;
  /** Where an answer goes, when the sender asked for one (`publish` with a reply subject). */
  reply?: string;
  /** Set on the server's own answer to a message published with a reply subject that nobody listened to (a 503 status, empty body). */
  noResponders?: true;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body parsed as JSON (throws when it is not JSON). */
  json<T = unknown>(): T;
}

/** A subscription that a caller ends. */
export interface BusSubscription {
  /** Stops delivery at once. */
  unsubscribe(): void;
  /** Delivers what has arrived, then stops. */
  drain(): Promise<void>;
}

/** Options of `subscribe` and `serve`. */
export interface SubscribeOptions {
  /** A queue group: each message goes to one member of the group only. */
  queue?: string;
  /** Called with a subscription error (a permissions violation), or a reply that could not be sent (larger than `maxPayload`); without it the error is dropped. */
  onError?: (err: unknown) => void;
}

/** What a request handler answers: the reply's body, now or later (a handler that throws or rejects sends none). */
export type Answer = (request: BusMessage) => string | Uint8Array | Promise<string | Uint8Array>;

/**
 * A connection to NATS with its JetStream client and manager: what every bus operation takes.
 * Opaque outside libs/bus; `connect` makes one.
 */
export interface Bus {
  /** Delivers every message on `subject` (wildcards allowed) to `onMessage` until unsubscribed. */
  subscribe(subject: string, onMessage: (msg: BusMessage) => void, opts?: SubscribeOptions): BusSubscription;
  /** Answers every request on `subject` with what `answer` returns. */
  serve(subject: string, answer: Answer, opts?: SubscribeOptions): BusSubscription;
  /**
   * Sends a request and resolves with the first reply; rejects when nobody serves the subject
   * (`isNoResponders`) or no reply comes within `timeoutMs` (`isTimeout`).
   */
  request(subject: string, body: string | Uint8Array, opts: { timeoutMs: number }): Promise<BusMessage>;
  /** Publishes on core NATS: no stream, no acknowledgement; `reply` names where an answer may go. */
  publish(subject: string, body: string | Uint8Array, reply?: string): void;
  /** A new reply subject of this connection's own (under its inbox prefix), to subscribe to and name in `publish`. */
  inbox(): string;
  /** Resolves once the server has processed everything published and subscribed so far. */
  flush(): Promise<void>;
  /** The same connection, with JetStream calls and acks bounded by `timeoutMs` instead. */
  withTimeout(timeoutMs: number): Bus;
  /** The most bytes one message may carry on this connection: the server's `max_payload`. */
  maxPayload(): number;
  /**
   * Moves the connection to another server of its pool through which `subject` has a listener, when
   * none listens through the one it is on (a NATS node cut off from its peers); `body` is what the
   * look sends on the subject. Resolves the server moved to, or null when it stays.
   */
  moveToListener(subject: string, body: string): Promise<string | null>;
  /** Whether the connection is closed. */
  isClosed(): boolean;
  /** Lets subscriptions deliver what has arrived, flushes what was published, and closes. */
  drain(): Promise<void>;
  /** Closes the connection at once. */
  close(): Promise<void>;
}
