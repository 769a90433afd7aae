import type { LoggedTransaction } from '@muster/core';
import type { FaultRecord } from './drillFaultRecord.ts';

/** Whether the log's time stayed with true time while a replica's clock ran ahead. */
export interface ClockResult {
  /** How far a stamp may lead the drill's clock: the stamp clock's slack plus the time a stamp takes to reach the log. */
  toleranceMs: number;
  /** The most any transaction's stamp led the drill's clock at the moment it must have been written by (ms; negative: behind). */
  maxAheadMs: number;
  /** Transactions written by a replica while its clock was ahead. */
  fastStamps: number;
  /** Transactions stamped more than the tolerance ahead, one line each (the first few). */
  jumps: string[];
}

/**
 * Checks every stamp against the drill's true clock: a transaction already in the log when a
 * fast-clock window ended (its `toSeq`) was written before that moment, and every transaction
 * before `readAt` (when the drill read the log), so its `at` may lead that moment by no more
 * than the tolerance.
 * A leader stamping its own fast clock would be an hour ahead; one holding its stamps to the log's
 * time as it watched it pass (the scheduler's StampClock) is at most its slack ahead.
 */
export function checkClock(log: readonly LoggedTransaction[], faults: readonly FaultRecord[], readAt: number, toleranceMs = 2_000): ClockResult {
  const windows = faults.flatMap((f) => (f.fastClock === undefined || f.fastClock.to === 0 ? [] : [f.fastClock]));
  const result: ClockResult = { toleranceMs, maxAheadMs: Number.NEGATIVE_INFINITY, fastStamps: 0, jumps: [] };
  for (const { seq, tx } of log) {
    // a transaction in the log when a window ended was written before it ended; any other, before the drill read the log
    const w = windows.filter((win) => seq <= win.toSeq).sort((a, b) => a.to - b.to)[0];
    if (windows.some((win) => tx.leader === win.replica && seq <= win.toSeq && tx.at >= win.from)) result.fastStamps++;
    const by = w === undefined ? readAt : w.to;
    const ahead = tx.at - by;
    result.maxAheadMs = Math.max(result.maxAheadMs, ahead);
    if (ahead > toleranceMs && result.jumps.length < 5) result.jumps.push(`log ${seq} (${tx.leader}): stamped ${ahead} ms ahead of the drill's clock`);
  }
  if (!Number.isFinite(result.maxAheadMs)) result.maxAheadMs = 0;
  return result;
}
