import type { Logger } from 'pino';
import { lastInputSequence, readInputs, sleep } from '@muster/bus';
import type { Bus, InputMessage } from '@muster/bus';
import { runRestartable } from './restartable.ts';

const INPUT_WATCHDOG_MS = 2000;
const GAP_CONFIRM_MS = 10_000;
// how long the offset between MUSTER_IN's clock and the log's is kept when later deliveries show more
const OFFSET_WINDOW_MS = 30_000;

/** What an input reader reads from and whom it tells. */
export interface InputReaderDeps {
  bus: Bus;
  log: Logger;
  /** Ends the reader. */
  signal: AbortSignal;
  /** Called when an input arrives in the buffer. */
  onInput: () => void;
  /** How long inputs a reader skipped are read again before they count as lost (default 10000). */
  gapConfirmMs?: number;
  /** The clock the log is stamped by (to carry MUSTER_IN's stored times over to it; default the wall clock). */
  now?: () => number;
}

/**
 * Reads MUSTER_IN from a sequence on into a buffer the leader's turns take from. A failed read (a
 * NATS node restarting, a consumer lost) is retried from where it stopped, and a watchdog restarts
 * a reader that silently stopped delivering: inputs are never skipped, and the buffer never holds
 * one twice. MUSTER_IN's sequences have no gaps (nothing deletes from it), so a reader that
 * delivers past one skipped inputs (a consumer served from a NATS node's copy with a hole, as a
 * node refilling its store has): they are read again, and only after `gapConfirmMs` of that are
 * they taken as lost, with an alarm, so that the leader goes on. It also says up to when deadlines
 * may fall due (`ingestCut`) while inputs are stored that no turn has taken.
 */
export class InputReader {
  private readonly buffer: InputMessage[] = [];
  private next: number;
  private seen = performance.now();
  private restart: () => void = () => undefined;
  // the first input a reader skipped, and since when it has been read again
  private gap: { seq: number; since: number } | null = null;
  // the last input delivered: when it was stored, and whether the stream held more after it
  private lastDelivered: { storedAt: number; more: boolean } | null = null;
  // the log's clock minus MUSTER_IN's (ms): the least a delivery with nothing behind it showed in
  // the last OFFSET_WINDOW_MS (a delivery late in the reading, as after a pause, shows more)
  private offset = 0;
  private offsetSince = Number.NEGATIVE_INFINITY;
  // MUSTER_IN's last sequence as last asked (the watchdog, `lookBehind`)
  private streamLast = 0;

  constructor(private readonly deps: InputReaderDeps, fromSeq: number) {
    this.next = fromSeq;
  }

  /** Inputs buffered and not yet taken. */
  get waiting(): number {
    return this.buffer.length;
  }

  /** Takes up to `max` buffered inputs, oldest first. */
  take(max: number): InputMessage[] {
    return this.buffer.splice(0, max);
  }

  /**
   * The time up to which timeouts and runtime limits may fall due (a session's `dueBy`), on the
   * log's clock, while MUSTER_IN holds inputs no turn has taken: when the first of them was stored
   * (or, while they are still in the stream, the last one delivered), so a deadline acts only once
   * every completion or cancel stored before it is ingested (under an ingest backlog, a gang that
   * finished is not stopped at its limit). MUSTER_IN's stored times are carried over to the log's
   * clock by the least offset deliveries with nothing behind them showed lately (a NATS server's
   * clock may differ from the leader's). 0 while such inputs are known of and this reader has
   * delivered none yet (a new term's first turns): when they were stored is not known, so no
   * deadline falls due. Null when no such input is known of.
   */
  ingestCut(): number | null {
    const first = this.buffer[0]?.storedAt;
    if (first !== undefined) return first + this.offset;
    const last = this.lastDelivered;
    if (last?.more !== true && this.streamLast < this.next) return null;
    return last === null ? 0 : last.storedAt + this.offset;
  }

  /** Asks MUSTER_IN's last sequence now, for `ingestCut` (a turn about to stop a gang at a deadline learns of inputs not yet delivered). */
  async lookBehind(): Promise<void> {
    this.streamLast = Math.max(this.streamLast, await lastInputSequence(this.deps.bus));
  }

  /** Reads (and watches the reading) until the signal ends it. */
  async run(): Promise<void> {
    await Promise.all([this.read(), this.watch()]);
  }

  private async read(): Promise<void> {
    const { signal, log } = this.deps;
    // one attempt per consumer: the watchdog restarts an attempt that silently stopped delivering
    await runRestartable(
      signal,
      (restart) => {
        this.restart = restart;
      },
      async (attempt) => {
        // the turn takes sequence, subject and body: decoding each input's headers for its msg id
        // (the stream deduplicates by it already) was a fifth of reading it
        for await (const input of readInputs(this.deps.bus, { fromSeq: this.next, tail: true, signal: attempt, withMsgId: false, withTime: true })) {
          this.seen = performance.now();
          if (input.seq < this.next) continue;
          if (input.seq > this.next && !this.gapLost(input.seq)) {
            throw new Error(`MUSTER_IN gave input ${input.seq} after ${this.next - 1}: inputs ${this.next} to ${input.seq - 1} were skipped; reading them again`);
          }
          this.next = input.seq + 1;
          this.delivered(input);
          this.buffer.push(input);
          this.deps.onInput();
        }
      },
      async (err) => {
        log.warn({ err, next: this.next }, 'input reader failed: retrying');
        await sleep(250, signal);
      },
    );
  }

  /** Notes when a delivered input was stored and whether more followed it (with none, the offset between the clocks). */
  private delivered(input: InputMessage): void {
    // (the reader asks withTime: every input says when it was stored)
    const storedAt = input.storedAt ?? Date.now();
    const more = input.pendingAfter !== 0;
    this.lastDelivered = { storedAt, more };
    if (more) return;
    const offset = (this.deps.now?.() ?? Date.now()) - storedAt;
    const now = performance.now();
    if (offset <= this.offset || now - this.offsetSince > OFFSET_WINDOW_MS) {
      this.offset = offset;
      this.offsetSince = now;
    }
  }

  /** Whether the inputs from `next` to before `seq` have been skipped for long enough to count as lost (then says so). */
  private gapLost(seq: number): boolean {
    const now = performance.now();
    if (this.gap?.seq !== this.next) this.gap = { seq: this.next, since: now };
    if (now - this.gap.since < (this.deps.gapConfirmMs ?? GAP_CONFIRM_MS)) return false;
    this.deps.log.error({ from: this.next, to: seq - 1 }, 'ALARM: MUSTER_IN does not give these inputs (lost by JetStream): going on without them');
    this.gap = null;
    return true;
  }

  /**
   * Restarts the reader when MUSTER_IN holds inputs past what it delivered and it has been silent
   * for a while (an ordered consumer can stall without an error when a NATS node restarts).
   */
  private async watch(): Promise<void> {
    const { signal, log } = this.deps;
    while (!signal.aborted) {
      await sleep(INPUT_WATCHDOG_MS, signal);
      if (signal.aborted) return;
      try {
        const last = await lastInputSequence(this.deps.bus);
        this.streamLast = Math.max(this.streamLast, last);
        if (last >= this.next && performance.now() - this.seen > INPUT_WATCHDOG_MS) {
          log.warn({ next: this.next, last }, 'input reader stalled: restarting it');
          this.seen = performance.now();
          this.restart();
        }
      } catch (err) {
        log.debug({ err }, 'input watchdog could not read MUSTER_IN');
      }
    }
  }
}
