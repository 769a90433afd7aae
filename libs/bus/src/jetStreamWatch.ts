import type { NatsConnection, Server } from '@nats-io/transport-node';
import { probeJetStream } from './jetStreamProbe.ts';
import { sleep } from './sleep.ts';

/** How a connection watches JetStream through its server, and how it reaches the others. */
export interface JetStreamWatchOptions {
  /** Milliseconds JetStream may be unavailable through the server before another server is looked for. */
  leaveAfterMs: number;
  /** Milliseconds between looks at JetStream through the server, and how long each waits. */
  probeMs: number;
  /** A short-lived connection to one server of the pool (`host:port`), to ask it; rejects when it cannot be reached. */
  connectTo: (server: string) => Promise<NatsConnection>;
  /** Hears that the connection leaves `server` for one that serves JetStream. */
  onLeave: (server: string) => void;
}

/**
 * Moves a connection off a NATS server through which JetStream has been unavailable for
 * `leaveAfterMs` (a node cut off from its peers, or on a full disk, answers "JetStream system
 * temporarily unavailable" or nothing, while it still answers pings), but only to a server that
 * serves JetStream when asked on a connection of its own: when no server does (a cluster electing,
 * or without quorum) the connection stays where it is and looks again a bound later.
 */
export class JetStreamWatch {
  // the server the next dial goes to (once), after a leave
  private target: string | null = null;

  constructor(private readonly opts: JetStreamWatchOptions) {}

  /** For nats.js's `reconnectToServer`: the server chosen by the last leave, once; otherwise the library's own choice. */
  nextServer(pool: ReadonlyArray<Server>): Server | null {
    const target = this.target;
    this.target = null;
    return pool.find((s) => s.listen === target) ?? null;
  }

  /** Watches `nc` until it closes. */
  watch(nc: NatsConnection): void {
    // a watch that fails ends, never the process: the connection works on without it
    this.run(nc).catch(() => undefined);
  }

  private async run(nc: NatsConnection): Promise<void> {
    const closed = new AbortController();
    void nc.closed().then(() => closed.abort());
    // since when (monotonic clock) JetStream has been unavailable through which server
    let spell = null as { server: string; since: number } | null;
    let nextLook = 0;
    while (!nc.isClosed()) {
      const asked = performance.now();
      const server = nc.getServer();
      const answer = await probeJetStream(nc, this.opts.probeMs);
      // this user may not look: nothing to watch
      if (answer === 'refused') return;
      if (answer === 'served') spell = null;
      // an answer of a server the connection has left meanwhile says nothing
      if (answer === 'unavailable' && server === nc.getServer()) {
        if (spell?.server !== server) spell = { server, since: asked };
        const now = performance.now();
        if (now - spell.since >= this.opts.leaveAfterMs && now >= nextLook) {
          // a look costs a connection to each other server: once per bound at most
          nextLook = now + this.opts.leaveAfterMs;
          const better = await this.servingElsewhere(nc, server);
          // the election may have ended meanwhile: then staying costs nothing
          if (better !== null && !nc.isClosed() && (await probeJetStream(nc, this.opts.probeMs)) === 'unavailable') {
            this.target = better;
            spell = null;
            this.opts.onLeave(server);
            await nc.reconnect().catch(() => undefined);
          }
        }
      }
      await sleep(this.opts.probeMs, closed.signal);
    }
  }

  // The first other server of the pool that serves JetStream, asked on a connection of its own.
  private async servingElsewhere(nc: NatsConnection, current: string): Promise<string | null> {
    for (const { listen } of nc.getServers()) {
      if (listen === current || nc.isClosed()) continue;
      const other = await this.opts.connectTo(listen).catch(() => null);
      if (other === null) continue;
      try {
        if ((await probeJetStream(other, this.opts.probeMs)) === 'served') return listen;
      } finally {
        await other.close().catch(() => undefined);
      }
    }
    return null;
  }
}
