import type { DrillRandom } from './drillRandom.ts';

const USERS = ['alice', 'bob', 'carol'] as const;

/**
 * The JobSpec of the drill's `n`-th submission: mostly small CPU gangs, some GPU gangs on the
 * simulated GPU nodes; every one fits an empty cluster of simulated nodes and finishes after
 * its `runtimeMs`, and none has a timeout, so every accepted job must end up committed.
 */
export function drillJob(prefix: string, n: number, random: DrillRandom): Record<string, unknown> {
  const id = `${prefix}-${n}`;
  const identity = { user: random.pick(USERS), queue: 'default', project: 'drill' };
  if (random.next() < 0.7) {
    return {
      id,
      identity,
      tasks: random.int(1, 4),
      resources: { cpu: 250 * random.int(1, 4), memoryMb: 256 * random.int(1, 4) },
      runtimeMs: random.int(500, 3_000),
    };
  }
  return {
    id,
    identity,
    roles: [{ name: 'worker', count: random.int(1, 4), resources: { cpu: 1_000, memoryMb: 2_048, gpus: random.int(1, 2) } }],
    placement: { policy: 'pack', gpuLocality: random.next() < 0.5 },
    select: "kind == 'gpu'",
    runtimeMs: random.int(1_000, 4_000),
  };
}
