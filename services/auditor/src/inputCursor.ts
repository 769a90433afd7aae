import type { Input } from '@muster/core';

/** The input a transaction names, and every input the stream held before it that no transaction named. */
export interface TakenInput {
  /** Null when the stream does not hold that sequence (purged, or never there). */
  input: Input | null;
  passed: Input[];
}

/** Inputs read ahead of the log, at most. */
const READ_AHEAD = 8192;

/**
 * Walks MUSTER_IN (or a recorded list of inputs) forward in step with the log's ingest events,
 * which name inputs in increasing sequence order; inputs it passes over were never ingested. It
 * reads ahead in the background (up to READ_AHEAD inputs), so reading the inputs overlaps with
 * reading and checking the log instead of waiting behind it.
 */
export class InputCursor {
  private readonly buffer: Input[] = [];
  private next = 0;
  private ended = false;
  private failure: unknown = null;
  private wake: (() => void) | null = null;
  private drained: (() => void) | null = null;
  private stopped = false;
  private readonly pumping: Promise<void>;

  constructor(private readonly source: AsyncIterator<Input>) {
    this.pumping = this.pump();
  }

  /** Moves to the input at `seq`. */
  async take(seq: number): Promise<TakenInput> {
    const passed: Input[] = [];
    for (;;) {
      const head = await this.peek();
      if (head === null || head.seq > seq) return { input: null, passed };
      this.next++;
      if (head.seq === seq) return { input: head, passed };
      passed.push(head);
    }
  }

  /** Stops reading (releases the stream's consumer). */
  async close(): Promise<void> {
    this.stopped = true;
    this.drained?.();
    await this.pumping;
    await this.source.return?.();
  }

  private async peek(): Promise<Input | null> {
    for (;;) {
      if (this.next < this.buffer.length) return this.buffer[this.next]!;
      if (this.failure !== null) throw this.failure;
      if (this.ended) return null;
      // everything buffered was taken: start over at the front, and let the pump go on
      this.buffer.length = 0;
      this.next = 0;
      this.drained?.();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private async pump(): Promise<void> {
    try {
      while (!this.stopped) {
        if (this.buffer.length - this.next >= READ_AHEAD) {
          await new Promise<void>((resolve) => (this.drained = resolve));
          this.drained = null;
          continue;
        }
        const item = await this.source.next();
        if (item.done === true) break;
        this.buffer.push(item.value);
        this.notify();
      }
    } catch (err) {
      this.failure = err;
    }
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
