import { connect as natsConnect } from '@nats-io/transport-node';
import type { ConnectionOptions } from '@nats-io/transport-node';
import type { Bus } from './bus.ts';
import { JetStreamWatch } from './jetStreamWatch.ts';
import { ListenerMove } from './listenerMove.ts';
import { NatsBus } from './natsBus.ts';
import { LOOK_MS, ServerMove } from './serverMove.ts';

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
  /** Milliseconds JetStream API calls and publish acks wait (default 5000); `Bus.withTimeout` changes it per use. */
  timeoutMs?: number;
  /**
   * Milliseconds between the client's pings (default 2000). A server that leaves two unanswered
   * (one wedged on a full disk keeps its sockets open and answers nothing) is left for another.
   */
  pingIntervalMs?: number;
  /**
   * Milliseconds JetStream may be unavailable through the server (it answers "JetStream system
   * temporarily unavailable", a stream without a leader, or nothing while it answers pings) before
   * the connection moves to a server that serves JetStream, if one does (default 0: never moves).
   * It asks its server for a stream's info each second to know: the scheduler's replicas pass
   * JETSTREAM_LEAVE_MS; a thousand agents asking each second would load the stream's leader.
   */
  jetStreamLeaveMs?: number;
  /**
   * Hears the connection leave a server (`stale`: it stopped answering pings; `unavailable`: JetStream
   * is unavailable through it and another serves it; `unheard`: a subject's listeners are reached
   * through another and not through it, `Bus.moveToListener`; `disconnect`) and reach one (`reconnect`).
   */
  onConnection?: (change: ConnectionChange) => void;
}

/** A change of the server a connection is on. */
export interface ConnectionChange {
  kind: 'stale' | 'unavailable' | 'unheard' | 'disconnect' | 'reconnect';
  /** The server left or reached ('' for `stale`, which names none). */
  server: string;
  /** What happened, in words for a log line. */
  what: string;
}

const WHAT: Record<ConnectionChange['kind'], string> = {
  stale: 'NATS server stopped answering pings: leaving it',
  unavailable: 'NATS server answers "JetStream temporarily unavailable": leaving it',
  unheard: 'nobody listens through this NATS server (no responders): leaving it for one through which a listener is reached',
  disconnect: 'disconnected from a NATS server',
  reconnect: 'reconnected to a NATS server',
};

// a look at JetStream through a server each second (LOOK_MS), waiting as long: a node cut off from
// its peers answered a stream's info with silence for about 5 s, then from a copy without a leader (2.9.10)
// a healthy cluster's elections took 5-7 s here; a move only ever goes to a server that serves
// JetStream when asked, so the bound need only outlast a slow answer or two
/** How long a replica's connection waits on a server through which JetStream is unavailable before it moves (`jetStreamLeaveMs`). */
export const JETSTREAM_LEAVE_MS = 3_000;

/** Connects to NATS with nats.js v3, reconnecting forever unless told otherwise. */
export async function connect(opts: ConnectOptions): Promise<Bus> {
  const credentials: Partial<ConnectionOptions> = {
    ...(opts.user === undefined ? {} : { user: opts.user }),
    ...(opts.pass === undefined ? {} : { pass: opts.pass }),
    ...(opts.token === undefined ? {} : { token: opts.token }),
    ...(opts.inboxPrefix === undefined ? {} : { inboxPrefix: opts.inboxPrefix }),
  };
  const leaveMs = opts.jetStreamLeaveMs ?? 0;
  const onConnection = opts.onConnection;
  // one question and gone: no reconnects, no pings
  const move = new ServerMove((server) => natsConnect({ servers: server, name: `${opts.name}-look`, reconnect: false, timeout: LOOK_MS, noAsyncTraces: true, ...credentials }));
  const watch =
    leaveMs <= 0 ? null : new JetStreamWatch({ leaveAfterMs: leaveMs, probeMs: LOOK_MS, move, onLeave: (server) => onConnection?.({ kind: 'unavailable', server, what: WHAT.unavailable }) });
  const nc = await natsConnect({
    servers: opts.servers,
    name: opts.name,
    maxReconnectAttempts: opts.maxReconnectAttempts ?? -1,
    reconnectTimeWait: opts.reconnectTimeWaitMs ?? 250,
    timeout: opts.connectTimeoutMs ?? 5_000,
    // nats.js pings every 2 minutes by default: a connection to a server that stopped answering
    // would hang every request that long
    pingInterval: opts.pingIntervalMs ?? 2_000,
    maxPingOut: 2,
    // nats.js otherwise builds an Error with a stack trace for every request and publish ack, in
    // case it fails: a third of the leader's time per JetStream publish in a profile
    noAsyncTraces: true,
    reconnectToServer: (pool) => move.nextServer(pool),
    ...credentials,
  });
  watch?.watch(nc);
  if (onConnection !== undefined) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'staleConnection') onConnection({ kind: 'stale', server: '', what: WHAT.stale });
        else if (s.type === 'disconnect' || s.type === 'reconnect') onConnection({ kind: s.type, server: s.server, what: WHAT[s.type] });
      }
    })();
  }
  const listenerMove = new ListenerMove(nc, move, (server) => onConnection?.({ kind: 'unheard', server, what: WHAT.unheard }));
  return new NatsBus(nc, opts.inboxPrefix, opts.timeoutMs, listenerMove);
}
