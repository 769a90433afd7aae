import type { NatsConnection } from '@nats-io/transport-node';
import { probeJetStream } from './jetStreamProbe.ts';
import type { ServerMove } from './serverMove.ts';
import { sleep } from './sleep.ts';

/** How a connection watches JetStream through its server, and how it moves. */
export interface JetStreamWatchOptions {
  /** Milliseconds JetStream may be unavailable through the server before another server is looked for. */
  leaveAfterMs: number;
  /** Milliseconds between looks at JetStream through the server, and how long each waits. */
  probeMs: number;
  /** How the connection reaches the other servers and moves to one. */
  move: ServerMove;
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
  constructor(private readonly opts: JetStreamWatchOptions) {}

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
          const better = await this.opts.move.firstServing(nc, server, async (other) => (await probeJetStream(other, this.opts.probeMs)) === 'served');
          // the election may have ended meanwhile: then staying costs nothing
          if (better !== null && !nc.isClosed() && (await probeJetStream(nc, this.opts.probeMs)) === 'unavailable') {
            spell = null;
            this.opts.onLeave(server);
            await this.opts.move.moveTo(nc, better);
          }
        }
      }
      await sleep(this.opts.probeMs, closed.signal);
    }
  }
}
