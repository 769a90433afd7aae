import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runScenarioText } from '@muster/core';

// What docs/simulate.md says of the example workloads under different policies.

const example = (name: string) => readFileSync(new URL(`../../examples/scenarios/${name}`, import.meta.url), 'utf8');
type Line = { type: string; jobId?: string; at?: number; waitMs?: number | null; outcome?: string } & Record<string, unknown>;

function run(name: string, policy?: unknown): Line[] {
  const r = runScenarioText(example(name), policy === undefined ? {} : { policy });
  if (!r.ok) throw new Error(r.error);
  return r.lines.map((l) => JSON.parse(l) as Line);
}

describe('the example workloads of docs/simulate.md', () => {
  it('starvation-workload: the gang commits at its reserved start and a short job is backfilled; with reserveDepth 0 it never starts', () => {
    const lines = run('starvation-workload.json');
    expect(lines.find((l) => l.type === 'GangReserved' && l.jobId === 'big')).toMatchObject({ at: 500, startAt: 32_000 });
    expect(lines.find((l) => l.type === 'GangCommitted' && l.jobId === 'big')?.at).toBe(32_000);
    expect(lines.find((l) => l.type === 'GangCommitted' && l.jobId === 'short')?.at).toBe(2500);
    const off = run('starvation-workload.json', { reserveDepth: 0 });
    expect(off.find((l) => l.type === 'JobStats' && l.jobId === 'big')).toMatchObject({ startedAt: null, outcome: 'pending' });
  });

  it('mixed-workload: reservations cut the gangs\' waits and the worst slowdown, at a cost in the small jobs\' median wait', () => {
    const off = run('mixed-workload.json', { reserveDepth: 0 });
    const easy = run('mixed-workload.json', { reserveDepth: 1 });
    const gangWait = (lines: Line[]) => Math.max(...lines.filter((l) => l.type === 'JobStats' && l.jobId!.startsWith('gang')).map((l) => l.waitMs!));
    type Figures = { reserved: number; jobs: Record<string, number>; wait: { p50: number }; slowdown: { max: number } };
    const [a, b] = [off.at(-1) as unknown as Figures, easy.at(-1) as unknown as Figures];
    expect(a.reserved).toBe(0);
    expect(b.reserved).toBeGreaterThan(0);
    expect(a.jobs).toEqual(b.jobs);
    expect(gangWait(easy)).toBeLessThan(gangWait(off) / 2);
    expect(b.slowdown.max).toBeLessThan(a.slowdown.max);
    expect(b.wait.p50).toBeGreaterThan(a.wait.p50);
  });
});
