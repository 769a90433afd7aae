import { describe, expect, it } from 'vitest';
import { LogShrinkWatch } from './logShrinkWatch.ts';

describe('LogShrinkWatch', () => {
  it('a leaderless answer behind what was folded is not evidence (a partitioned node answering from its stale copy after the heal)', () => {
    let now = 0;
    const watch = new LogShrinkWatch(() => now, 30_000);
    watch.reset(60);
    expect(watch.observe(67, 'n3', 67)).toBe('ok');
    // the drill's partition-nats run: "last sequence 36, seen 67", answered by n1 with no leader
    for (; now <= 120_000; now += 120) expect(watch.observe(36, '', 67)).toBe('unknown');
    expect(watch.seen).toBe(67);
  });

  it('an answer from a leader that is behind holds the replica back, and counts as a shrunk log only when it stays so for the window', () => {
    let now = 0;
    const watch = new LogShrinkWatch(() => now, 30_000);
    watch.reset(88);
    expect(watch.observe(34, 'n1', 88)).toBe('suspect');
    now = 29_999;
    expect(watch.observe(34, 'n1', 88)).toBe('suspect');
    now = 30_000;
    expect(watch.observe(34, 'n1', 88)).toBe('shrunk');
    expect(watch.reason).toContain('last sequence 34 (leader n1), seen 88');
  });

  it('an answer at or past what was seen clears a suspicion, and the window starts again at the next one', () => {
    let now = 0;
    const watch = new LogShrinkWatch(() => now, 30_000);
    watch.reset(10);
    expect(watch.observe(5, 'n1', 10)).toBe('suspect');
    now = 20_000;
    expect(watch.observe(12, 'n2', 10)).toBe('ok');
    now = 40_000;
    expect(watch.observe(5, 'n1', 12)).toBe('suspect');
    now = 69_999;
    expect(watch.observe(5, 'n1', 12)).toBe('suspect');
    now = 70_000;
    expect(watch.observe(5, 'n1', 12)).toBe('shrunk');
  });

  it('what the replica folded counts as seen, though no answer reported it', () => {
    const watch = new LogShrinkWatch(() => 0, 0);
    watch.reset(3);
    expect(watch.observe(3, 'n1', 9)).toBe('shrunk');
    expect(watch.observe(9, 'n1', 9)).toBe('ok');
  });
});
