import { describe, expect, it } from 'vitest';
import { StampClock } from './stampClock.ts';

const HOUR = 3_600_000;

describe('StampClock', () => {
  it('stamps the wall clock while it agrees with the time the replica has watched pass', () => {
    let mono = 0;
    const clock = new StampClock(() => mono, 1_000);
    clock.observe(1_000_000);
    mono = 500;
    expect(clock.stamp(1_000_000, 1_000_400)).toBe(1_000_400);
    mono = 60_000;
    expect(clock.stamp(1_000_400, 1_060_200)).toBe(1_060_200);
  });

  it('a clock an hour fast does not jump the log: it stamps the log time plus the time it watched pass plus the slack, turn after turn', () => {
    let mono = 10;
    const clock = new StampClock(() => mono, 1_000);
    const T = 1_764_400_000_000;
    clock.observe(T);
    let last = T;
    for (let turn = 1; turn <= 1_000; turn++) {
      mono += 10;
      const at = clock.stamp(last, T + HOUR + turn * 10);
      // its own stamps never move the anchor: the slack is added once, not once per turn
      expect(at).toBe(T + turn * 10 + 1_000);
      last = at;
    }
  });

  it('never stamps before the log\'s last stamp, even with a clock behind', () => {
    let mono = 0;
    const clock = new StampClock(() => mono, 1_000);
    clock.observe(5_000);
    mono = 100;
    expect(clock.stamp(5_000, 1_000)).toBe(5_000);
  });

  it('moves its anchor when the log shows a later stamp than it could have (another leader wrote it), and not otherwise', () => {
    let mono = 0;
    const clock = new StampClock(() => mono, 1_000);
    clock.observe(10_000);
    mono = 2_000;
    // within what it could have watched pass (10000 + 2000 + slack): the anchor stays
    clock.observe(12_500);
    expect(clock.bound()).toBe(13_000);
    // beyond it: someone wrote a later stamp, and the log is where it is
    clock.observe(14_000);
    expect(clock.bound()).toBe(15_000);
    mono = 3_000;
    clock.observe(15_500);
    expect(clock.bound()).toBe(16_000);
  });

  it('the first leader of a new log stamps its wall clock and is held to it from then on', () => {
    let mono = 0;
    const clock = new StampClock(() => mono, 1_000);
    clock.observe(0);
    expect(clock.stamp(0, 50_000)).toBe(50_000);
    mono = 4_000;
    expect(clock.stamp(50_000, 50_000 + HOUR)).toBe(55_000);
  });
});
