import type { CheckName, Failure } from './auditReport.ts';

/** How many failures a report lists (the count covers all of them). */
const LISTED = 20;

const STAGE: Record<CheckName, number> = {
  chain: 0,
  time: 1,
  fencing: 1,
  structure: 2,
  'exactly-once': 2,
  session: 2,
  ingest: 2,
  fact: 2,
  checkpoint: 2,
  invariant: 3,
  snapshot: 4,
  'decisions-stream': 5,
};

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

  /** Adds the failures another log kept (`count` of them in all: the rest are counted only). */
  merge(kept: readonly Failure[], count: number): void {
    for (const f of kept) this.add(f);
    this.count += count - kept.length;
  }

  /**
   * The kept failures in log order, and within one sequence in the order the checks are made (the
   * chain, stamps and fencing, the transaction's own checks, invariants, snapshots, the decisions
   * stream), whichever thread of a parallel audit found them.
   */
  list(): Failure[] {
    return [...this.kept].sort((a, b) => a.seq - b.seq || STAGE[a.check] - STAGE[b.check]);
  }
}
