import { within } from '@muster/stack';
import { injectFault } from './drillFaults.ts';
import type { FaultContext, FaultRecord } from './drillFaultRecord.ts';
import { recoverCluster } from './drillRecover.ts';
import { sleepUntil } from './drillSleep.ts';

/** When faults may start: not before `startAt`, none after `lastAt` (both ms since the epoch). */
export interface FaultWindow {
  startAt: number;
  lastAt: number;
  signal: AbortSignal;
}

/**
 * Runs the fault schedule of `ctx.opts.schedule` inside the window. Sequential: the kinds in turn,
 * one at a time, each followed by a full recovery and `faultEveryS` of quiet. Chaotic: faults at
 * exponentially distributed intervals (mean `faultEveryS`) of kinds drawn from the seeded PRNG,
 * injected without waiting for earlier ones, so they overlap.
 */
export async function runFaultSchedule(ctx: Omit<FaultContext, 'cutShort'>, window: FaultWindow): Promise<FaultRecord[]> {
  const cut = new AbortController();
  const faults = { ...ctx, cutShort: cut.signal };
  return ctx.opts.schedule === 'sequential' ? sequential(faults, window) : chaotic(faults, window, cut);
}

async function sequential(ctx: FaultContext, window: FaultWindow): Promise<FaultRecord[]> {
  const records: FaultRecord[] = [];
  const kinds = ctx.opts.faults;
  await sleepUntil(window.startAt, window.signal);
  for (let i = 0; kinds.length > 0 && !window.signal.aborted && Date.now() <= window.lastAt; i++) {
    const kind = kinds[i % kinds.length];
    if (kind === undefined) break;
    records.push(await injectFault(i + 1, kind, ctx));
    const trouble = await recoverCluster(ctx.cluster);
    if (trouble !== null) ctx.progress(`recovery: ${trouble}`);
    await sleepUntil(Date.now() + ctx.opts.faultEveryS * 1000, window.signal);
  }
  return records;
}

// how long the faults of a chaotic schedule may run after the last is injected, and then how long
// those cut short may take to give up (a restart in progress, one more look at the node's store)
const FAULTS_BOUND_MS = 180_000;
const CUT_SHORT_MS = 30_000;

async function chaotic(ctx: FaultContext, window: FaultWindow, cut: AbortController): Promise<FaultRecord[]> {
  const kinds = ctx.opts.faults;
  const plan: { at: number; kind: (typeof kinds)[number] }[] = [];
  for (let at = window.startAt + ctx.random.exponential(ctx.opts.faultEveryS * 1000); at <= window.lastAt && kinds.length > 0; at += ctx.random.exponential(ctx.opts.faultEveryS * 1000)) {
    plan.push({ at, kind: ctx.random.pick(kinds) });
  }
  ctx.progress(`chaotic schedule: ${plan.length} faults planned (seed ${ctx.opts.seed})`);
  const running: Promise<FaultRecord>[] = [];
  for (const [i, step] of plan.entries()) {
    await sleepUntil(step.at, window.signal);
    if (window.signal.aborted) break;
    running.push(injectFault(i + 1, step.kind, ctx));
  }
  // each fault bounds its own waits; this bounds them all together: past it, a NATS node's recovery
  // still waiting for its copies gives up (an error of its fault), and the drill checks what it has
  const all = Promise.all(running);
  const records = await within(all, FAULTS_BOUND_MS);
  if (records !== null) return records;
  ctx.progress(`faults still running ${FAULTS_BOUND_MS / 1000} s after the last one was injected: cutting their waits short`);
  cut.abort();
  const late = await within(all, CUT_SHORT_MS);
  if (late === null) throw new Error(`faults still running ${(FAULTS_BOUND_MS + CUT_SHORT_MS) / 1000} s after the last one was injected`);
  return late;
}
