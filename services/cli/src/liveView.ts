import type { MusterClient } from '@muster/client';
import { clock, decisionLine } from './format.ts';

/** Counts of what the live view has shown. */
export interface LiveCounts {
  placed: number;
  waiting: number;
  aborted: number;
  /** Elastic gangs grown or shrunk (DESIGN.md §13). */
  resized: number;
}

/**
 * Prints every job's decisions as they come (`14:03:07  train  placed  sim-2 worker[0,1] gpus 0,1`)
 * until `signal` aborts; resolves with how many of each it printed.
 */
export async function followDecisions(client: MusterClient, opts: { signal: AbortSignal; print: (line: string) => void }): Promise<LiveCounts> {
  const counts: LiveCounts = { placed: 0, waiting: 0, aborted: 0, resized: 0 };
  for await (const decision of client.watchAll({ deliver: 'all', signal: opts.signal })) {
    if (decision.type === 'GangResized') counts.resized += 1;
    else if (decision.type === 'GangCommitted') counts.placed += 1;
    else if (decision.final) counts.aborted += 1;
    else counts.waiting += 1;
    opts.print(`${clock(decision.at)}  ${decisionLine(decision)}`);
  }
  return counts;
}
