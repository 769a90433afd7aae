import { describe, expect, it } from 'vitest';
import { runSteps } from '@muster/core';
import type { Steps } from '@muster/core';
import { stepInSlices } from './stepInSlices.ts';

/** Steps that each keep the CPU busy for `stepMs`, `count` of them; returns how many ran. */
function* busySteps(count: number, stepMs: number): Steps<number> {
  for (let i = 0; i < count; i++) {
    const until = performance.now() + stepMs;
    while (performance.now() < until);
    yield;
  }
  return count;
}

/** How many times a 10 ms timer fired while `run` ran. */
async function timerTicksDuring(run: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

describe('stepInSlices', () => {
  it('gives timers a turn between slices of a long computation, and returns its result', async () => {
    let result: { value: number; busyMs: number } | null = null;
    const ticks = await timerTicksDuring(async () => (result = await stepInSlices(busySteps(100, 3), 20)));
    expect(result!.value).toBe(100);
    expect(result!.busyMs).toBeGreaterThanOrEqual(300);
    // 300 ms of steps in slices of 20 ms: the timer ran in (nearly) every gap
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it('run at once, the same steps give timers no turn at all', async () => {
    const ticks = await timerTicksDuring(async () => runSteps(busySteps(100, 3)));
    expect(ticks).toBe(0);
  });
});
