import type { SubjectCount } from '@muster/bus';

/**
 * Tells whether a reader of one subject was given every message the stream holds on it, also
 * while messages keep coming: a count taken under traffic is judged once the reader has read past
 * the stream's last sequence at the count (messages come in sequence order), against what it was
 * given up to there. A reader that was silent for a while is judged at once against the whole count.
 */
export class DeliveryCensus {
  /** Messages given since the subject was last read from its start. */
  private given = 0;
  /** The last sequence given. */
  private lastSeq = 0;
  /** While a count is being asked for: what had been given when it was asked, and the sequences given since. */
  private asked: { given: number; since: number[] } | null = null;
  /** A count to judge once the reader reads past its last sequence, and what was given up to there. */
  private open: { messages: number; lastSeq: number } | null = null;

  /** Starts again from nothing given: the subject is read again from its start. */
  restart(): void {
    this.given = 0;
    this.lastSeq = 0;
    this.forget();
  }

  /** Drops the count asked for or waiting to be judged (its reader was replaced). */
  forget(): void {
    this.asked = null;
    this.open = null;
  }

  /** Marks the moment a count is asked for. */
  ask(): void {
    this.asked = { given: this.given, since: [] };
  }

  /** Records one message given; returns the verdict on a count it lets be judged (true: short of it), or null. */
  record(seq: number): boolean | null {
    let verdict: boolean | null = null;
    if (this.open !== null && seq > this.open.lastSeq) {
      verdict = this.open.messages > this.given;
      this.open = null;
    }
    this.given += 1;
    this.lastSeq = seq;
    this.asked?.since.push(seq);
    return verdict;
  }

  /**
   * Takes a count's answer. Returns the verdict when it can be judged now (true: short of it):
   * at once after silence, or once the reader has read past the count's last sequence; null until then.
   */
  answer(count: SubjectCount, silent: boolean): boolean | null {
    const asked = this.asked;
    this.asked = null;
    if (asked === null) return null;
    if (silent) {
      this.open = null;
      return count.messages > this.given;
    }
    if (this.lastSeq > count.lastSeq) return count.messages > asked.given + asked.since.filter((s) => s <= count.lastSeq).length;
    this.open = { messages: count.messages, lastSeq: count.lastSeq };
    return null;
  }
}
