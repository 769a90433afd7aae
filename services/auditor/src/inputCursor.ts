import type { Input } from '@muster/core';

/** The input a transaction names, and every input the stream held before it that no transaction named. */
export interface TakenInput {
  /** Null when the stream does not hold that sequence (purged, or never there). */
  input: Input | null;
  passed: Input[];
}

/**
 * Walks MUSTER_IN (or a recorded list of inputs) forward in step with the log's ingest events,
 * which name inputs in increasing sequence order; inputs it passes over were never ingested. The
 * inputs come in batches (the reader pulls ahead of the log in the background): `reach` awaits
 * batches until the inputs of a whole transaction are in hand, and `take` then moves through them
 * without awaiting, input by input.
 */
export class InputCursor {
  private buffer: readonly Input[] = [];
  private next = 0;
  private ended = false;

  constructor(private readonly source: AsyncIterator<readonly Input[]>) {}

  /** Reads on until the input at `seq`, or the end of the inputs, is in hand. */
  async reach(seq: number): Promise<void> {
    while (!this.ended && (this.next === this.buffer.length || this.buffer[this.buffer.length - 1]!.seq < seq)) {
      const item = await this.source.next();
      if (item.done === true) {
        this.ended = true;
        return;
      }
      // keep what is not taken yet: a transaction's inputs may span batches
      if (this.next === this.buffer.length) this.buffer = item.value;
      else this.buffer = this.buffer.slice(this.next).concat(item.value);
      this.next = 0;
    }
  }

  /** Moves to the input at `seq` (which `reach` must have read up to). */
  take(seq: number): TakenInput {
    const passed: Input[] = [];
    while (this.next < this.buffer.length) {
      const head = this.buffer[this.next]!;
      if (head.seq > seq) break;
      this.next++;
      if (head.seq === seq) return { input: head, passed };
      passed.push(head);
    }
    return { input: null, passed };
  }

  /** Stops reading (releases the stream's consumer). */
  async close(): Promise<void> {
    await this.source.return?.();
  }
}
