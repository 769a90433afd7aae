// What nats.js keeps outside its typed interfaces, read in one place: the connection a JetStream
// client works on, and the options a connection was made with (pinned nats.js 3.4.0).
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** The connection a nats.js JetStream client works on; null for anything else. */
export function connectionOf(js: JetStreamClient): NatsConnection | null {
  return (js as unknown as { nc?: NatsConnection }).nc ?? null;
}

/** The options a nats.js connection was made with (servers, credentials, `inboxPrefix`, `tls`); empty for anything else. */
export function connectionOptions(nc: NatsConnection): Readonly<Record<string, unknown>> {
  return (nc as unknown as { options?: Record<string, unknown> }).options ?? {};
}

/** The prefix of a connection's reply subjects (a restricted user may subscribe only below its own). */
export function inboxPrefixOf(nc: NatsConnection): string | undefined {
  const prefix = connectionOptions(nc).inboxPrefix;
  return typeof prefix === 'string' ? prefix : undefined;
}
