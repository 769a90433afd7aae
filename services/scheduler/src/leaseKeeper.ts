import type { Logger } from 'pino';
import type { LeaderLease } from '@muster/bus';
import { monotonicMs } from './config.ts';

/** The lease as won: the term to lead in and the KV revision to refresh against. */
export interface WonLease {
  term: number;
  revision: number;
}

/**
 * The lease policy on top of the KV primitives: a candidate creates the lease when there is none,
 * and takes it over when it has seen no sign of a leader for `leaseMs` on its own monotonic clock:
 * no refresh of the lease, and no growth of the log (`sawActivity`). Only time it was looking
 * counts: of the time between two looks at most half a lease, so a standby whose own event loop
 * stalled (folding a burst, a loaded machine) does not count its stall as the leader's silence
 * and fence a live leader. A lease under this replica's own id is taken back at once only when
 * this process won its term; otherwise it is an earlier life's (waited out) or another process's
 * with the same id (said at error, and left to lead). The lease only chooses who tries to write;
 * the log's fencing is the guarantee.
 */
export class LeaseKeeper {
  private lastRevision = -1;
  // the silence seen since the last sign of a leader (ms), and when the last look was
  private silentMs = 0;
  private lastLook = monotonicMs();
  // the term of a lease write whose outcome is unknown (it timed out): found written at the next look, it is won
  private unknownTerm: number | null = null;
  // the last term this process won (its own lease, found after it stepped down, is taken back at once)
  private wonTerm: number | null = null;
  // whether the last look found the lease under this replica's id but of a term this process never won
  private foreignOwnAtLastLook = false;
  // said once: another process runs with this replica's id
  private twinSaid = false;

  /** `looks`: the lease as a standby's looks see it (calls bounded shorter than the lease), by default `lease`. */
  constructor(
    private readonly lease: LeaderLease,
    private readonly id: string,
    private readonly leaseMs: number,
    private readonly log: Logger,
    private readonly looks: LeaderLease = lease,
  ) {}

  /** One look at the lease; returns the won lease when this replica just took it. */
  async tryAcquire(minTerm: number): Promise<WonLease | null> {
    const looked = monotonicMs();
    this.silentMs += Math.min(looked - this.lastLook, this.leaseMs / 2);
    this.lastLook = looked;
    const current = await this.looks.readLease();
    const unknownTerm = this.unknownTerm;
    this.unknownTerm = null;
    if (current === null) {
      const term = minTerm + 1;
      const r = await this.looks.createLease(this.id, term);
      if (r.ok) {
        // no lease: none was ever taken, or the last holder gave it up
        this.log.info({ term }, 'took the free lease');
        return this.won(term, r.revision);
      }
      if (r.code === 'timeout') this.unknownTerm = term;
      this.log.debug({ code: r.code }, 'lease create lost');
      return null;
    }
    // a write that timed out landed after all: the lease is this replica's
    if (unknownTerm !== null && current.id === this.id && current.term === unknownTerm) {
      this.log.info({ term: unknownTerm }, 'took over the lease (a write that timed out had landed)');
      this.lastRevision = current.revision;
      return this.won(unknownTerm, current.revision);
    }
    const foreignOwnBefore = this.foreignOwnAtLastLook;
    this.foreignOwnAtLastLook = current.id === this.id && current.term !== this.wonTerm;
    if (current.revision !== this.lastRevision) {
      this.lastRevision = current.revision;
      this.silentMs = 0;
      if (current.id !== this.id) return null;
      // this replica's id but a term this process never won: an earlier life's lease, which nobody
      // refreshes (waited out like any silent holder), or another process started with the same id,
      // which refreshes it (two such took it from each other every few hundred ms for the rest of an
      // hour soak when each took "its own" lease at once): that one leads, this one stands by
      if (this.foreignOwnAtLastLook) {
        if (foreignOwnBefore && !this.twinSaid) {
          this.twinSaid = true;
          this.log.error({ id: this.id, term: current.term }, 'another process holds the lease under this replica\'s id: two processes run with one --id; standing by while it leads');
        }
        return null;
      }
      // the lease of a term this process led: nobody else refreshes it
    } else if (this.silentMs <= this.leaseMs) {
      return null;
    }
    const term = Math.max(current.term, minTerm) + 1;
    const r = await this.looks.updateLease(current.revision, { id: this.id, term });
    if (r.ok) {
      this.log.info({ from: current.id, term }, 'took over the lease');
      return this.won(term, r.revision);
    }
    if (r.code === 'timeout') this.unknownTerm = term;
    return null;
  }

  private won(term: number, revision: number): WonLease {
    this.wonTerm = term;
    this.foreignOwnAtLastLook = false;
    return { term, revision };
  }

  /**
   * Counts as a refresh seen now: the log grew, so a leader is writing. On a loaded machine the
   * lease's KV write can take longer than the lease while the pipelined appends keep flowing, and
   * a standby taking over from a leader that is writing only costs a takeover and fences it.
   */
  sawActivity(): void {
    this.silentMs = 0;
    this.lastLook = monotonicMs();
  }

  /** Gives the lease up so that a standby takes over at once. */
  async release(won: WonLease): Promise<void> {
    await this.lease.releaseLease(won.revision);
  }
}
