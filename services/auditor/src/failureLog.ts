import type { Failure } from './auditReport.ts';

/** How many failures a report lists (the count covers all of them). */
const LISTED = 20;

/** The failures of an audit: all counted, the earliest (by log sequence) kept. */
export class FailureLog {
  count = 0;
  private readonly kept: Failure[] = [];

  /** Records one failure. */
  add(failure: Failure): void {
    this.count++;
    if (this.kept.length < LISTED) {
      this.kept.push(failure);
      return;
    }
    // keep the earliest: failures of the decisions stream arrive at the end with early sequences
    let latest = 0;
    for (let i = 1; i < this.kept.length; i++) if (this.kept[i]!.seq > this.kept[latest]!.seq) latest = i;
    if (failure.seq < this.kept[latest]!.seq) this.kept[latest] = failure;
  }

  /** The kept failures in log order. */
  list(): Failure[] {
    return [...this.kept].sort((a, b) => a.seq - b.seq);
  }
}
