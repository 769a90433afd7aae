// What the service benchmarks share: a figure's printed line, and the shape of a stretch of the log.
import { readLog } from '@muster/bus';
import type { Bus } from '@muster/bus';

/** Prints one figure: its label padded to `width`, then its value. */
export function line(label: string, value: string, width = 52): void {
  console.log(`${label.padEnd(width)} ${value}`);
}

/** How the leader batched a stretch of the log, from `fromSeq` to its end now. */
export interface LogShape {
  sessions: number;
  txs: number;
  events: number;
  /** The longest gap between two transactions' stamps (ms): about the longest turn. */
  longestGapMs: number;
}

/** Sessions, transactions, events and the longest gap between stamps in the log from `fromSeq` to its end now. */
export async function logShape(bus: Bus, fromSeq: number): Promise<LogShape> {
  const shape: LogShape = { sessions: 0, txs: 0, events: 0, longestGapMs: 0 };
  let lastAt: number | null = null;
  for await (const { tx } of readLog(bus, { fromSeq, verifyChain: false })) {
    shape.txs++;
    shape.events += tx.events.length;
    if (tx.kind === 'session' && tx.part === 1) shape.sessions++;
    if (lastAt !== null) shape.longestGapMs = Math.max(shape.longestGapMs, tx.at - lastAt);
    lastAt = tx.at;
  }
  return shape;
}
