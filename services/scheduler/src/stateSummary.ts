import { shardLeaves } from '@muster/core';
import type { State } from '@muster/core';

/** An amount per resource a node has, as the state counts them. */
export interface NodeAmounts {
  cpu: number;
  memoryMb: number;
  gpus: number;
  slots: number;
}

/** What the metrics' gauges read from one state, counted in one walk over its jobs and one over its nodes. */
export interface StateSummary {
  jobsByStatus: Map<string, number>;
  pendingByReason: Map<string, number>;
  reservations: number;
  nodesByStatus: Map<string, number>;
  /** Allocated on nodes not lost. */
  allocated: NodeAmounts;
  /** Capacity of nodes not lost (slots: of the nodes that limit them). */
  capacity: NodeAmounts;
}

const cache = new WeakMap<State, StateSummary>();

/** The summary of `state`, computed once per state object (a scrape reads it for several gauges). */
export function summarise(state: State): StateSummary {
  const cached = cache.get(state);
  if (cached !== undefined) return cached;
  const summary: StateSummary = {
    jobsByStatus: new Map(),
    pendingByReason: new Map(),
    reservations: 0,
    nodesByStatus: new Map(),
    allocated: { cpu: 0, memoryMb: 0, gpus: 0, slots: 0 },
    capacity: { cpu: 0, memoryMb: 0, gpus: 0, slots: 0 },
  };
  // counting needs no order: every leaf as it is, none sorted
  for (const [, leaf] of shardLeaves(state.jobs)) for (const job of leaf) {
    bump(summary.jobsByStatus, job.status);
    if (job.status !== 'pending') continue;
    bump(summary.pendingByReason, job.pendReason?.category ?? 'new');
    if (job.reservation !== undefined) summary.reservations += 1;
  }
  for (const [, leaf] of shardLeaves(state.nodes)) for (const node of leaf) {
    bump(summary.nodesByStatus, node.status);
    if (node.status === 'lost') continue;
    const { allocated: a, capacity: c } = summary;
    a.cpu += node.used.cpu;
    a.memoryMb += node.used.memoryMb;
    a.gpus += node.gpusUsed.length;
    a.slots += node.used.slots;
    c.cpu += node.spec.capacity.cpu;
    c.memoryMb += node.spec.capacity.memoryMb;
    c.gpus += node.spec.gpus.length;
    c.slots += node.spec.capacity.slots ?? 0;
  }
  cache.set(state, summary);
  return summary;
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
