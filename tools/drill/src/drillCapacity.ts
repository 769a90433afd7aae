import { simulatedNodes } from '@muster/agent';
import { DRILL_MIX } from './drillJobs.ts';

/** What the drill's workload asks of a cluster and what a cluster of simulated nodes holds. */
export interface DrillLoad {
  /** Expected use at any moment (Little's law: arrival rate × size × run time), per resource. */
  demand: { cpu: number; gpus: number; slots: number };
  /** What `nodes` simulated nodes hold (GPU jobs run only on the GPU nodes). */
  capacity: { cpu: number; gpus: number; slots: number };
  /** The busiest resource's expected use over its capacity (1 = saturated on average). */
  load: number;
}

const mean = (r: readonly [number, number]): number => (r[0] + r[1]) / 2;

/** The expected load of `rate` gangs a second of the drill's mix on `nodes` simulated nodes. */
export function drillLoad(rate: number, nodes: number): DrillLoad {
  const c = DRILL_MIX.cpu;
  const g = DRILL_MIX.gpu;
  const cpuSeconds = (mean(c.runtimeMs) / 1000) * mean(c.members);
  const gpuSeconds = (mean(g.runtimeMs) / 1000) * mean(g.members);
  const demand = {
    cpu: rate * (c.share * cpuSeconds * c.cpuStep * mean(c.cpuSteps) + g.share * gpuSeconds * g.cpu),
    gpus: rate * g.share * gpuSeconds * mean(g.gpus),
    slots: rate * (c.share * cpuSeconds + g.share * gpuSeconds),
  };
  const specs = simulatedNodes(nodes);
  const capacity = {
    cpu: specs.reduce((n, s) => n + s.capacity.cpu, 0),
    gpus: specs.reduce((n, s) => n + s.gpus.length, 0),
    slots: specs.reduce((n, s) => n + (s.capacity.slots ?? 0), 0),
  };
  const ratio = (d: number, cap: number): number => (cap === 0 ? (d === 0 ? 0 : Number.POSITIVE_INFINITY) : d / cap);
  return { demand, capacity, load: Math.max(ratio(demand.cpu, capacity.cpu), ratio(demand.gpus, capacity.gpus), ratio(demand.slots, capacity.slots)) };
}

/**
 * The fewest simulated nodes (at least three: one of each kind, so every job fits) on which
 * `rate` gangs a second of the drill's mix load the busiest resource to `target` (0.65: the
 * offered load is about two thirds of capacity, so queues form and drain but do not grow).
 */
export function nodesForRate(rate: number, target = 0.65): number {
  let nodes = 3;
  while (drillLoad(rate, nodes).load > target) nodes += 3;
  return nodes;
}
