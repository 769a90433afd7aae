import type { NatsConnection } from '@nats-io/transport-node';
import { hasListener } from './serverMove.ts';
import type { ServerMove } from './serverMove.ts';

/** Milliseconds after a look that found no better server before the next look. */
const LOOK_GAP_MS = 10_000;

/**
 * Moves a connection to a server through which a subject has a listener, when none listens through
 * the one it is on (a NATS node cut off from its peers passes nothing to listeners on the others):
 * one look at a time, and none for LOOK_GAP_MS after a look that found no better server (when
 * nobody listens anywhere, every replica down, no client should dial every server over and over).
 */
export class ListenerMove {
  private looking: Promise<string | null> | null = null;
  private nextLook = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly move: ServerMove,
    /** Hears that the connection leaves server `from`. */
    private readonly onMove: (from: string) => void,
  ) {}

  /** Moves to a server through which `subject` has a listener (asked with `body`), when none does through this one; resolves the server moved to, or null. */
  toListener(subject: string, body: string): Promise<string | null> {
    if (this.looking !== null) return this.looking;
    if (performance.now() < this.nextLook || this.nc.isClosed()) return Promise.resolve(null);
    this.looking = this.look(subject, body).finally(() => {
      this.looking = null;
    });
    return this.looking;
  }

  private async look(subject: string, body: string): Promise<string | null> {
    const current = this.nc.getServer();
    if (await hasListener(this.nc, subject, body)) return null;
    const better = await this.move.firstServing(this.nc, current, (other) => hasListener(other, subject, body));
    // moved meanwhile (a disconnect), or nowhere better: stay, and look again later
    if (better === null || this.nc.isClosed() || this.nc.getServer() !== current) {
      this.nextLook = performance.now() + LOOK_GAP_MS;
      return null;
    }
    this.onMove(current);
    await this.move.moveTo(this.nc, better);
    return better;
  }
}
