import { describe, expect, it } from 'vitest';
import { sleep } from '@muster/bus';
import { StallWatch } from '@muster/bus/testing';

/** Milliseconds until `stalls()` is 1 (polling), or null after `withinMs`. */
async function untilStall(stalls: () => number, withinMs: number): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    if (stalls() > 0) return Date.now() - started;
    await sleep(50);
  }
  return null;
}

describe('StallWatch', () => {
  it('calls onStall once, no sooner than the bound of silence while an answer is due, and never while none is', async () => {
    let due = false;
    let stalls = 0;
    const watch = new StallWatch(1_500, () => stalls++, () => due);
    try {
      await sleep(2_500);
      expect(stalls).toBe(0);
      due = true;
      watch.heard();
      await sleep(1_000);
      watch.heard();
      const after = await untilStall(() => stalls, 8_000);
      expect(after).not.toBeNull();
      expect(after!).toBeGreaterThanOrEqual(1_400);
      await sleep(1_200);
      expect(stalls).toBe(1);
    } finally {
      watch.stop();
    }
  }, 20_000);

  it('does not count a stretch the thread was busy as silence (the answers wait in the socket meanwhile)', async () => {
    let stalls = 0;
    const watch = new StallWatch(1_500, () => stalls++);
    try {
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        // the caller re-deriving for 3 s, twice the bound
      }
      // the wait starts again once the thread is free: no stall at its first look
      const after = await untilStall(() => stalls, 8_000);
      expect(after).not.toBeNull();
      expect(after!).toBeGreaterThanOrEqual(1_400);
    } finally {
      watch.stop();
    }
  }, 20_000);
});
