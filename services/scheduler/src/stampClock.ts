import { monotonicMs } from './config.ts';

/** How far a stamp may run ahead of the log's time as this replica has watched it pass (ms). */
export const STAMP_SLACK_MS = 1_000;

/**
 * The time a leader stamps into its transactions, safe against a wall clock that is ahead.
 * The replica keeps an anchor: the log's latest stamp and the moment (on its own monotonic clock)
 * it first saw the log reach it. The log's time now is at most that stamp plus the time the
 * replica has watched pass since, so a stamp is `min(wall clock, anchor + elapsed + slack)`: a
 * replica whose clock is an hour fast stamps what the log's time can be, not its own clock, and
 * the core still never stamps before the log's last stamp. The anchor moves only when the log
 * shows a stamp beyond that bound (another leader wrote it), never for a stamp this replica
 * wrote itself, so the slack is not added again turn after turn. DESIGN.md §3 (time),
 * docs/drills.md (the fast clock).
 */
export class StampClock {
  private anchor: { at: number; mono: number } | null = null;

  constructor(
    private readonly monotonic: () => number = monotonicMs,
    private readonly slackMs: number = STAMP_SLACK_MS,
  ) {}

  /** The log's time now can be no later than this (null before the replica has seen the log). */
  bound(): number | null {
    if (this.anchor === null) return null;
    return this.anchor.at + (this.monotonic() - this.anchor.mono) + this.slackMs;
  }

  /** The log's last stamp as folded from the log (a standby's tail, a rebuild): the anchor moves if the log is past the bound. */
  observe(lastAt: number): void {
    // a log with no stamp yet says nothing about time
    if (lastAt <= 0) return;
    const bound = this.bound();
    if (bound === null || lastAt > bound) this.anchor = { at: lastAt, mono: this.monotonic() };
  }

  /** The stamp of a turn on a state whose last stamp is `lastAt`, given the wall clock's `wall`. */
  stamp(lastAt: number, wall: number): number {
    if (this.anchor === null) this.observe(lastAt);
    // the first stamp of a new log has nothing to be checked against but the wall clock
    if (this.anchor === null) this.anchor = { at: wall, mono: this.monotonic() };
    const bound = this.bound() as number;
    // never before the log's last stamp (the core raises it there too); never beyond what can have passed; whole ms, as the wall clock
    return Math.max(lastAt, Math.min(wall, Math.floor(bound)));
  }
}
