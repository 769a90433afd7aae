import { runDrill } from './drill.ts';
import type { DrillHooks } from './drill.ts';
import type { DrillOptions, DrillSchedule } from './drillOptions.ts';
import type { DrillReport } from './drillReport.ts';

/** What a soak runs: the same drill options for each schedule in turn. */
export interface SoakOptions extends Partial<DrillOptions> {
  /** The schedules to run, one drill each (default: chaotic, every fault kind). */
  schedules?: readonly DrillSchedule[];
}

/** The reports of every drill of a soak; `ok` when each passed. */
export interface SoakReport {
  ok: boolean;
  drills: DrillReport[];
}

/**
 * A soak: one long drill per schedule (by default the chaotic one with every fault kind), each on its own fresh cluster.
 * `onReport` hears each drill's report as soon as it ends; an abort skips the drills not yet begun.
 */
export async function runSoak(opts: SoakOptions, hooks: DrillHooks & { onReport?: (report: DrillReport) => void } = {}): Promise<SoakReport> {
  const { schedules = ['chaotic'], ...drill } = opts;
  const drills: DrillReport[] = [];
  for (const schedule of schedules) {
    if (hooks.signal?.aborted === true) break;
    hooks.progress?.(`soak: ${schedule} drill`);
    const report = await runDrill({ ...drill, schedule }, hooks);
    hooks.onReport?.(report);
    drills.push(report);
  }
  return { ok: drills.length === schedules.length && drills.every((d) => d.ok), drills };
}
