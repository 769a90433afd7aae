import type { DrillRandom } from './drillRandom.ts';

const USERS = ['alice', 'bob', 'carol'] as const;

/** An integer range, both ends included, drawn uniformly. */
type Range = readonly [number, number];

/**
 * The drill's job mix as data, so that the workload and the capacity it needs come from one place:
 * CPU gangs of 1–8 members (a data-parallel step, a sweep), and GPU gangs of 1–4 members with one
 * or two devices each (half of them NVLink-local) on the GPU nodes, each running for seconds.
 */
export const DRILL_MIX = {
  cpu: { share: 0.75, members: [1, 8] as Range, cpuSteps: [1, 4] as Range, cpuStep: 500, memorySteps: [1, 8] as Range, memoryStep: 512, runtimeMs: [1_000, 8_000] as Range },
  gpu: { share: 0.25, members: [1, 4] as Range, gpus: [1, 2] as Range, cpu: 2_000, memoryMb: 8_192, runtimeMs: [2_000, 6_000] as Range },
} as const;

// a job waits at most this long to be placed and runs at most its runtime plus this: far more than
// a drill at 65 % load needs, so a timeout or a limit in the log means the log's time jumped (a fast clock)
const TIMEOUT_MS = 600_000;
const LIMIT_MARGIN_MS = 60_000;

/**
 * The JobSpec of the drill's `n`-th submission, drawn from {@link DRILL_MIX}: every one fits an
 * empty cluster of three or more simulated nodes and finishes after its `runtimeMs`, long before
 * its `timeoutMs` and `runtimeLimitMs`, so every accepted job must end up committed and finished.
 */
export function drillJob(prefix: string, n: number, random: DrillRandom): Record<string, unknown> {
  const id = `${prefix}-${n}`;
  const identity = { user: random.pick(USERS), queue: 'default', project: 'drill' };
  const draw = (r: Range): number => random.int(r[0], r[1]);
  if (random.next() < DRILL_MIX.cpu.share) {
    const c = DRILL_MIX.cpu;
    return {
      id,
      identity,
      tasks: draw(c.members),
      resources: { cpu: c.cpuStep * draw(c.cpuSteps), memoryMb: c.memoryStep * draw(c.memorySteps) },
      ...times(draw(c.runtimeMs)),
    };
  }
  const g = DRILL_MIX.gpu;
  return {
    id,
    identity,
    roles: [{ name: 'worker', count: draw(g.members), resources: { cpu: g.cpu, memoryMb: g.memoryMb, gpus: draw(g.gpus) } }],
    placement: { policy: 'pack', gpuLocality: random.next() < 0.5 },
    select: "kind == 'gpu'",
    ...times(draw(g.runtimeMs)),
  };
}

function times(runtimeMs: number): { runtimeMs: number; timeoutMs: number; runtimeLimitMs: number } {
  return { runtimeMs, timeoutMs: TIMEOUT_MS, runtimeLimitMs: runtimeMs + LIMIT_MARGIN_MS };
}
