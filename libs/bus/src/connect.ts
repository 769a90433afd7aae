import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';

/** How to reach NATS. */
export interface ConnectOptions {
  /** One url or several (`nats://host:port`); a cluster's urls let the client fail over. */
  servers: string | string[];
  /** The connection name the server shows in its monitoring. */
  name: string;
  /** Reconnect attempts after a disconnect; -1 (the default) retries forever. */
  maxReconnectAttempts?: number;
  /** Milliseconds between reconnect attempts to one server (default 250). */
  reconnectTimeWaitMs?: number;
  /** Milliseconds to wait for the first connection (default 5000). */
  connectTimeoutMs?: number;
  /** User name, for a server with users and permissions (deploy/nats/accounts.conf). */
  user?: string;
  /** The user's password. */
  pass?: string;
  /** A token, for a server that authenticates by token instead. */
  token?: string;
  /**
   * The prefix of this connection's reply subjects (default `_INBOX`); a restricted user may only
   * subscribe below its own prefix (`_INBOX_<user>`), so no one can read another user's replies.
   */
  inboxPrefix?: string;
}

/** Connects to NATS with nats.js v3, reconnecting forever unless told otherwise. */
export function connect(opts: ConnectOptions): Promise<NatsConnection> {
  return natsConnect({
    servers: opts.servers,
    name: opts.name,
    maxReconnectAttempts: opts.maxReconnectAttempts ?? -1,
    reconnectTimeWait: opts.reconnectTimeWaitMs ?? 250,
    timeout: opts.connectTimeoutMs ?? 5_000,
    // nats.js otherwise builds an Error with a stack trace for every request and publish ack, in
    // case it fails: a third of the leader's time per JetStream publish in a profile
    noAsyncTraces: true,
    ...(opts.user === undefined ? {} : { user: opts.user }),
    ...(opts.pass === undefined ? {} : { pass: opts.pass }),
    ...(opts.token === undefined ? {} : { token: opts.token }),
    ...(opts.inboxPrefix === undefined ? {} : { inboxPrefix: opts.inboxPrefix }),
  });
}

/**
 * The JetStream client of a connection; `timeoutMs` bounds API calls and publish acks (default
 * 5000). Managers it makes skip the account-info probe, as `jetStreamManager` does.
 */
export function jetStream(nc: NatsConnection, opts: { timeoutMs?: number } = {}): JetStreamClient {
  return jetstream(nc, { timeout: opts.timeoutMs ?? 5_000, checkAPI: false });
}

/**
 * The JetStream manager of a connection (stream info, message get, stream create and update),
 * made without the client's account-info probe, which needs a JetStream meta leader and so fails
 * during a cluster's election; a missing JetStream shows on the first real call instead.
 */
export function jetStreamManager(nc: NatsConnection, opts: { timeoutMs?: number } = {}): Promise<JetStreamManager> {
  return jetstreamManager(nc, { timeout: opts.timeoutMs ?? 5_000, checkAPI: false });
}
