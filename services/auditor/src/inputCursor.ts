import type { Input } from '@muster/core';

/** The input a transaction names, and every input the stream held before it that no transaction named. */
export interface TakenInput {
  /** Null when the stream does not hold that sequence (purged, or never there). */
  input: Input | null;
  passed: Input[];
}

/**
 * Walks MUSTER_IN (or a recorded list of inputs) forward in step with the log's ingest events,
 * which name inputs in increasing sequence order; inputs it passes over were never ingested.
 */
export class InputCursor {
  private head: Input | null | undefined;

  constructor(private readonly source: AsyncIterator<Input>) {}

  /** Moves to the input at `seq`. */
  async take(seq: number): Promise<TakenInput> {
    const passed: Input[] = [];
    for (;;) {
      const head = await this.peek();
      if (head === null || head.seq > seq) return { input: null, passed };
      this.head = undefined;
      if (head.seq === seq) return { input: head, passed };
      passed.push(head);
    }
  }

  /** Stops reading (releases the stream's consumer). */
  async close(): Promise<void> {
    await this.source.return?.();
  }

  private async peek(): Promise<Input | null> {
    if (this.head === undefined) {
      const next = await this.source.next();
      this.head = next.done === true ? null : next.value;
    }
    return this.head;
  }
}
