// The drill's fault kinds, one module each: a new kind is one new module and one line here.
import type { DrillFault } from './drillFault.ts';
import { fastClock } from './fastClock.ts';
import { fullDisk } from './fullDisk.ts';
import { killLeader } from './killLeader.ts';
import { partitionLeader } from './partitionLeader.ts';
import { partitionNats } from './partitionNats.ts';
import { pauseLeader } from './pauseLeader.ts';
import { restartNats } from './restartNats.ts';
import { restartStandby } from './restartStandby.ts';
import { slowNetwork } from './slowNetwork.ts';

/** Every fault kind, in the order a sequential drill cycles through them. */
export const DRILL_FAULTS = [killLeader, pauseLeader, restartNats, restartStandby, fastClock, fullDisk, partitionLeader, partitionNats, slowNetwork] as const;

/** A fault the drill injects. */
export type FaultKind = (typeof DRILL_FAULTS)[number]['kind'];

/** Every fault kind's name, in the registry's order. */
export const ALL_FAULT_KINDS: readonly FaultKind[] = DRILL_FAULTS.map((f) => f.kind);

/** The kinds a drill injects unless told (`inDefault`). */
export const FAULT_KINDS: readonly FaultKind[] = DRILL_FAULTS.filter((f) => f.inDefault).map((f) => f.kind);

/** The module of `kind`; throws on a name the registry does not hold. */
export function drillFault(kind: FaultKind): DrillFault<FaultKind> {
  const fault = DRILL_FAULTS.find((f) => f.kind === kind) as DrillFault<FaultKind> | undefined;
  if (fault === undefined) throw new Error(`unknown fault ${String(kind)}`);
  return fault;
}

/** `muster drill --faults list`: one line per kind with what it does, what it needs and whether it is in the default set. */
export function faultsHelp(): string {
  const width = Math.max(...DRILL_FAULTS.map((f) => f.kind.length));
  return DRILL_FAULTS.map((f) => {
    const tags = [f.inDefault ? 'default' : 'on demand', ...(f.needs === null ? [] : [`needs ${f.needs}`])];
    return `${f.kind.padEnd(width)}  ${f.help} [${tags.join('; ')}]`;
  }).join('\n');
}
