import { expect } from 'vitest';
import { drillTable, runDrill } from '@muster/drill';
import type { DrillOptions, DrillReport } from '@muster/drill';

/**
 * Runs a drill, keeping its progress lines, and prints its table (every run, here and in CI, shows
 * its figures); `why` is what a failed expectation shows: the table, the kept logs, every line.
 */
export async function drillWithWhy(opts: Partial<DrillOptions>): Promise<{ report: DrillReport; why: string }> {
  const lines: string[] = [];
  const report = await runDrill(opts, { progress: (line) => lines.push(line) });
  console.log(drillTable(report));
  return { report, why: `\n${drillTable(report)}\nlogs: ${report.logsDir}\n${lines.join('\n')}` };
}

/**
 * What every drill must keep whatever its faults: nothing lost, left uncommitted, duplicated,
 * contradicted or overcommitted; replicas, replay and the auditor agree; no replica refused to
 * lead (only a log that really shrank may make one refuse, and it is then out of every later
 * takeover); no log loss; a clean audit.
 */
export function expectNothingLost(report: DrillReport, why: string): void {
  const c = report.checks;
  expect(c.lost.count, why).toBe(0);
  expect(c.neverCommitted.count, why).toBe(0);
  expect(c.duplicated.count, why).toBe(0);
  expect(c.contradicted.count, why).toBe(0);
  expect(c.overcommit.count + c.overcommit.auditor, why).toBe(0);
  expect([c.divergence.replicas, c.divergence.replay, c.divergence.notAtEnd, c.divergence.auditor], why).toEqual([0, 0, 0, 0]);
  expect(c.divergence.statuses.filter((s) => s.refusedBecause !== null), why).toEqual([]);
  expect(c.logLoss.examples, why).toEqual([]);
  expect(report.auditor?.clean, why).toBe(true);
}
