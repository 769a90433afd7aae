import type { FaultRecord } from '../drillFaultRecord.ts';

/** The leader a leader fault took down: its target, at the fault's time (null when skipped or without one). */
export function targetHit(record: FaultRecord): { from: string; at: number } | null {
  return record.skipped !== null || record.target === null ? null : { from: record.target, at: record.at };
}
