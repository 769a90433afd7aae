import type { AllocationResources } from '../events.ts';
import type { QueueResources } from '../contract/types.ts';
import type { QueueView } from '../api/apiViews.ts';
import { shardLeaves } from '../shard.ts';
import type { State } from '../state.ts';
import type { QueueTable } from './queueTree.ts';
import { DEFAULT_QUEUE, QueuePaths, isLeafQueue } from './queueTree.ts';

/** The resources a queue guarantee, max or use is judged on. */
export const QUEUE_RESOURCES = ['cpu', 'memoryMb', 'gpus'] as const;

/** One queue resource. */
export type QueueResource = (typeof QUEUE_RESOURCES)[number];

function zero(): AllocationResources {
  return { cpu: 0, memoryMb: 0, gpus: 0 };
}

/** Adds `amount` into `target` in place (taken away with sign -1). */
export function addAllocation(target: AllocationResources, amount: AllocationResources, sign: 1 | -1 = 1): void {
  target.cpu += sign * amount.cpu;
  target.memoryMb += sign * amount.memoryMb;
  target.gpus += sign * amount.gpus;
}

/**
 * What every queue uses now, its children's use included: the state's use per named queue, each
 * counted in the queue it is scheduled in (`effectiveQueue`) and in every ancestor. The implicit
 * `default` queue is a root beside the defined ones (unless one is named so).
 */
export function subtreeUsage(state: State, paths: QueuePaths = new QueuePaths(state.queues ?? {})): Map<string, AllocationResources> {
  const out = new Map<string, AllocationResources>();
  for (const name of Object.keys(state.queues ?? {})) out.set(name, zero());
  if (!out.has(DEFAULT_QUEUE)) out.set(DEFAULT_QUEUE, zero());
  for (const [name, use] of Object.entries(state.usage.queues)) for (const q of paths.of(name)) addAllocation(out.get(q)!, use);
  return out;
}

/** Use above the guarantee on each resource the guarantee names (a queue that names none borrows all it uses). */
export function borrowed(use: AllocationResources, guaranteed: QueueResources): AllocationResources {
  const names = QUEUE_RESOURCES.some((r) => guaranteed[r] !== undefined);
  const out = zero();
  for (const r of QUEUE_RESOURCES) {
    const g = guaranteed[r];
    out[r] = !names ? use[r] : g === undefined ? 0 : Math.max(0, use[r] - g);
  }
  return out;
}

/** Every queue with its use, guarantee, max, borrowing and job counts, by name. */
export function queueViews(state: State): QueueView[] {
  const queues: QueueTable = state.queues ?? {};
  const paths = new QueuePaths(queues);
  const usage = subtreeUsage(state, paths);
  const counts = new Map<string, { pending: number; running: number }>();
  for (const name of usage.keys()) counts.set(name, { pending: 0, running: 0 });
  for (const [, jobs] of shardLeaves(state.jobs)) {
    for (const job of jobs) {
      if (job.status !== 'pending' && job.status !== 'running') continue;
      for (const q of paths.of(job.spec.identity.queue)) counts.get(q)![job.status]++;
    }
  }
  const rows: QueueView[] = [];
  for (const [name, used] of usage) {
    const spec = queues[name];
    const row = counts.get(name)!;
    if (spec === undefined) {
      // the implicit default queue: shown only while it is the only one or holds jobs
      if (Object.keys(queues).length > 0 && row.pending === 0 && row.running === 0) continue;
      rows.push({ name, parent: null, leaf: true, weight: 1, guaranteed: {}, max: {}, used, borrowed: borrowed(used, {}), ...row, implicit: true });
      continue;
    }
    rows.push({
      name, parent: spec.parent ?? null, leaf: isLeafQueue(queues, name), weight: spec.weight, guaranteed: spec.guaranteed, max: spec.max,
      used, borrowed: borrowed(used, spec.guaranteed), ...row, implicit: false,
    });
  }
  return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
