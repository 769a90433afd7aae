import type { NatsConnection, Server } from '@nats-io/transport-node';
import { isTimeout } from './isWrongLastSequence.ts';
import { isNoResponders } from './requestErrors.ts';

/** Milliseconds a look at another server (its connection, then its answer) may take. */
export const LOOK_MS = 1_000;

/**
 * Moves a connection from the server it is on to another of its pool that does what the first no
 * longer does (serve JetStream, or pass a subject to its listeners), asked on a short-lived
 * connection to each: the chosen server is the one the connection's next dial goes to.
 */
export class ServerMove {
  // the server the next dial goes to (once), after a move
  private target: string | null = null;

  /** `connectTo` opens a short-lived connection to one server of the pool (`host:port`), rejecting when it cannot be reached. */
  constructor(private readonly connectTo: (server: string) => Promise<NatsConnection>) {}

  /** For nats.js's `reconnectToServer`: the server chosen by the last move, once; otherwise the library's own choice. */
  nextServer(pool: ReadonlyArray<Server>): Server | null {
    const target = this.target;
    this.target = null;
    return pool.find((s) => s.listen === target) ?? null;
  }

  /** The first server of `nc`'s pool but `current` for which `serves` holds, asked on a connection of its own; null when none does. */
  async firstServing(nc: NatsConnection, current: string, serves: (other: NatsConnection) => Promise<boolean>): Promise<string | null> {
    for (const { listen } of nc.getServers()) {
      if (listen === current || nc.isClosed()) continue;
      const other = await this.connectTo(listen).catch(() => null);
      if (other === null) continue;
      try {
        if (await serves(other)) return listen;
      } finally {
        await other.close().catch(() => undefined);
      }
    }
    return null;
  }

  /** Reconnects `nc` to `server`. */
  async moveTo(nc: NatsConnection, server: string): Promise<void> {
    this.target = server;
    await nc.reconnect().catch(() => undefined);
  }
}

/**
 * Whether a request on `subject` through `nc` reaches a listener: it is answered, or it times out
 * (someone took it without answering); a server that knows no listener answers "no responders".
 */
export async function hasListener(nc: NatsConnection, subject: string, body: string): Promise<boolean> {
  try {
    await nc.request(subject, body, { timeout: LOOK_MS });
    return true;
  } catch (err) {
    if (isNoResponders(err)) return false;
    return isTimeout(err);
  }
}
