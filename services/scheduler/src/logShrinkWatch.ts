/**
 * What one answer about MUSTER_LOG's end says: `ok` (not behind anything seen), `unknown` (not
 * evidence: no stream leader stood behind it), `suspect` (behind, not yet for long: do not take the
 * lease), `shrunk` (behind for the whole confirmation window: the server lost acknowledged writes).
 */
export type ShrinkVerdict = 'ok' | 'unknown' | 'suspect' | 'shrunk';

/**
 * How long a log end behind what a replica already saw must last before it counts as lost writes.
 * nats-server 2.9.10 lets a stream leader cut off in a minority go on answering from its own stale
 * state until it notices it lost the quorum: up to its lost-quorum check (every 10 s) after 10 s
 * without the others, so about 20 s; a log that really shrank stays shrunk.
 */
export const SHRINK_CONFIRM_MS = 30_000;

/**
 * Judges the stream info answers a replica gets for MUSTER_LOG, to alarm (and refuse to lead) when
 * the log went backwards, without taking a stale answer for lost writes. In nats-server 2.9.10
 * (`jsStreamInfoRequest`, `isGroupLeaderless`) every member of a stream group that sees no leader
 * answers STREAM.INFO itself, from its own copy: after a partition heals, the node that was cut off
 * answers with the last sequence it had (the report carries no leader), and its answer may be the
 * first to arrive. Such an answer says nothing about the log. An answer from a leader that is
 * behind can still be a deposed leader's that has not noticed yet; only one that stays behind for
 * `confirmMs` is taken for a shrunk log.
 */
export class LogShrinkWatch {
  private highest = 0;
  private behindSince: number | null = null;
  private lastReason = '';

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly confirmMs = SHRINK_CONFIRM_MS,
  ) {}

  /** The highest last sequence a leader reported (or the replica folded). */
  get seen(): number {
    return this.highest;
  }

  /** What the latest `suspect` or `shrunk` verdict was about, for the alarm. */
  get reason(): string {
    return this.lastReason;
  }

  /** Starts over from a rebuild: `last` is the log's end the rebuild read. */
  reset(last: number): void {
    this.highest = last;
    this.behindSince = null;
  }

  /**
   * One answer: the stream's last sequence `last`, the server that answered as the stream's leader
   * (`leader`, '' when it had none), and what the replica had folded before asking (`folded`).
   */
  observe(last: number, leader: string, folded: number): ShrinkVerdict {
    // a leaderless member's own copy, possibly a partitioned node's stale one
    if (leader === '') return 'unknown';
    const seen = Math.max(this.highest, folded);
    if (last >= seen) {
      this.highest = last;
      this.behindSince = null;
      return 'ok';
    }
    const now = this.now();
    this.behindSince ??= now;
    const forMs = Math.round(now - this.behindSince);
    this.lastReason = `MUSTER_LOG went backwards: last sequence ${last} (leader ${leader}), seen ${seen}, for ${forMs} ms`;
    return forMs >= this.confirmMs ? 'shrunk' : 'suspect';
  }
}
