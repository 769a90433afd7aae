import { describe, expect, it } from 'vitest';
import { runScenario, runScenarioText } from '@muster/core';
import type { WorkloadEntry } from '@muster/core';

// The workload mode of `muster simulate` (DESIGN.md §11, "What-if on a workload"): arrivals and run
// times through the same turn, one session per instant, JobStats lines and the Summary's figures.

type Line = { type: string; jobId?: string; at?: number; startAt?: number; reason?: { category: string; message: string } } & Record<string, unknown>;

const slots = (id: string, n: number) => ({ id, capacity: { cpu: 1_000_000, memoryMb: 1_000_000, slots: n }, gpus: [] });
const job = (id: string, tasks: number, more: Record<string, unknown> = {}) => ({ id, identity: { user: 'u' }, tasks, resources: { cpu: 1000, memoryMb: 1024 }, ...more });

function run(scenario: Record<string, unknown>, policy?: unknown): Line[] {
  const r = runScenarioText(JSON.stringify(scenario), policy === undefined ? {} : { policy });
  if (!r.ok) throw new Error(r.error);
  return r.lines.map((l) => JSON.parse(l) as Line);
}

const stats = (lines: Line[]) => lines.filter((l) => l.type === 'JobStats');
const summary = (lines: Line[]) => lines.at(-1)!;

/** Issue 12's "Why" as a workload: four full 8-slot hosts, a 32-member gang, a small job finishing and one arriving every second. */
function starvation(): Record<string, unknown> {
  const workload: WorkloadEntry[] = [];
  for (let i = 0; i < 32; i++) workload.push({ at: 0, submit: job(`s${i}`, 1, { runtimeLimitMs: 32_000 }), runMs: (i + 1) * 1000 });
  workload.push({ at: 500, submit: job('big', 32, { priority: 100, identity: { user: 'big' }, runtimeLimitMs: 60_000 }), runMs: 60_000 });
  for (let t = 1; t <= 40; t++) {
    workload.push({ at: t * 1000, submit: job(`n${t}`, 1, { runtimeLimitMs: 32_000 }), runMs: 32_000 });
    if (t === 2) workload.push({ at: 2500, submit: job('short', 1, { runtimeLimitMs: 5000 }), runMs: 3000 });
  }
  return { nodes: [1, 2, 3, 4].map((i) => slots(`h${i}`, 8)), workload, until: 200_000 };
}

describe('muster simulate, workload mode', () => {
  it('gives the figures of a small workload checked by hand', () => {
    const nodes = [{ id: 'n1', capacity: { cpu: 4000, memoryMb: 4096, slots: 2 }, gpus: [] }];
    const workload = [
      { at: 0, submit: job('a', 2), runMs: 30_000 },
      { at: 5000, submit: job('b', 1), runMs: 20_000 },
      { at: 5000, submit: job('bad', 1, { minInstances: 3 }), runMs: 1 },
      { at: 10_000, submit: job('c', 1, { timeoutMs: 5000 }), runMs: 1000 },
    ];
    const lines = run({ nodes, workload });
    // decisions first, in log order: a at 0; bad rejected; b waits for a, reserved at a's assumed end (no limit: a day)
    const decisions = lines.filter((l) => l.type !== 'JobStats' && l.type !== 'Summary');
    expect(decisions.filter((l) => l.type === 'GangCommitted' || l.type === 'JobRejected').map((l) => `${l.type} ${l.jobId ?? ''} ${l.at ?? ''}`)).toEqual([
      'GangCommitted a 0', 'JobRejected bad ', 'GangCommitted b 30000',
    ]);
    expect(decisions.find((l) => l.type === 'GangReserved')).toMatchObject({ jobId: 'b', at: 5000, startAt: 86_400_000 });
    expect(decisions.filter((l) => l.type === 'GangAborted' && l.jobId === 'c').at(-1)).toMatchObject({ at: 15_000, final: true, reason: { category: 'timeout' } });
    expect(stats(lines)).toEqual([
      { type: 'JobStats', jobId: 'a', submittedAt: 0, startedAt: 0, endedAt: 30_000, waitMs: 0, outcome: 'succeeded' },
      { type: 'JobStats', jobId: 'b', submittedAt: 5000, startedAt: 30_000, endedAt: 50_000, waitMs: 25_000, outcome: 'succeeded' },
      { type: 'JobStats', jobId: 'c', submittedAt: 10_000, startedAt: null, endedAt: null, waitMs: null, outcome: 'timedout' },
    ]);
    // instants 0, 5000, 10000, 15000 (c's timeout), 30000 (a ends), 50000 (b ends): one session each
    expect(summary(lines)).toMatchObject({
      type: 'Summary', at: 50_000, sessions: 6, committed: 2, rejected: 1, jobs: { succeeded: 2, timedout: 1 },
      // waits 0 and 25000: nearest rank p50 is the first, p95 the second
      wait: { mean: 12_500, p50: 0, p95: 25_000, max: 25_000 },
      // a: (0 + 30 s) / 30 s = 1; b: (25 s + 20 s) / 20 s = 2.25
      slowdown: { mean: 1.625, p50: 1, p95: 2.25, max: 2.25 },
      // cpu: (2000 × 30 s + 1000 × 20 s) / (4000 × 50 s); slots: (2 × 30 + 1 × 20) / (2 × 50); no GPUs
      utilisation: { cpu: 0.4, memoryMb: 0.4, gpus: null, slots: 0.8 },
    });
  });

  it('bounds slowdown below by 10 s of run and prints the same bytes on every run', () => {
    const nodes = [slots('n1', 1)];
    const workload = [{ at: 0, submit: job('a', 1), runMs: 2000 }, { at: 0, submit: job('b', 1), runMs: 1000 }];
    const lines = run({ nodes, workload });
    // b waits 2 s and runs 1 s: (2 + 1) / max(1, 10) = 0.3
    expect(summary(lines)).toMatchObject({ wait: { mean: 1000, max: 2000 }, slowdown: { p50: 0.2, max: 0.3 }, at: 3000 });
    const text = JSON.stringify(starvation());
    const first = runScenarioText(text);
    expect(runScenarioText(text)).toEqual(first);
  });

  it('commits the starving gang at the time its reservation promised, backfills a short job at once, and starves it with reserveDepth 0', () => {
    const lines = run(starvation());
    expect(lines.find((l) => l.type === 'GangReserved' && l.jobId === 'big')).toMatchObject({ at: 500, startAt: 32_000 });
    expect(lines.find((l) => l.type === 'GangCommitted' && l.jobId === 'big')?.at).toBe(32_000);
    expect(lines.find((l) => l.type === 'GangCommitted' && l.jobId === 'short')?.at).toBe(2500);
    expect(lines.find((l) => l.type === 'GangAborted' && l.jobId === 'n1')?.reason?.message).toMatch(/would delay job big, reserved to start at 32000/);
    expect(stats(lines).find((s) => s.jobId === 'big')).toMatchObject({ startedAt: 32_000, endedAt: 92_000, waitMs: 31_500, outcome: 'succeeded' });

    const off = run(starvation(), { reserveDepth: 0 });
    expect(off.some((l) => l.type === 'GangReserved')).toBe(false);
    // it runs only when the stream has dried up: the last newcomer (40 s) ended at its 32 s limit
    expect(stats(off).find((s) => s.jobId === 'big')).toMatchObject({ startedAt: 72_000, waitMs: 71_500 });
  });

  it('members that finish at a limit finish before it is checked; a longer run is stopped at its limit', () => {
    const nodes = [slots('n1', 4)];
    const workload = [
      { at: 0, submit: job('fits', 1, { runtimeLimitMs: 5000 }), runMs: 5000 },
      { at: 0, submit: job('over', 2, { runtimeLimitMs: 5000 }), runMs: 9000 },
    ];
    const lines = run({ nodes, workload });
    expect(lines.find((l) => l.type === 'GangAborted' && l.jobId === 'over')).toMatchObject({ at: 5000, final: true, reason: { category: 'runtime-limit' } });
    expect(stats(lines).map((s) => [s.jobId, s.endedAt, s.outcome])).toEqual([['fits', 5000, 'succeeded'], ['over', 5000, 'runtime-limit']]);
    // nothing happens at 9000: the stopped gang's members are not reported done
    expect(summary(lines)).toMatchObject({ at: 5000, rejected: 0 });
  });

  it('closes a kept-warm gang when its run time is over; a run time 0 ends right after the commit', () => {
    const nodes = [slots('n1', 2)];
    const workload = [
      { at: 0, submit: job('warm', 2, { minInstances: 2 }), runMs: 4000 },
      { at: 1000, submit: job('next', 2), runMs: 0 },
    ];
    const lines = run({ nodes, workload });
    expect(stats(lines)).toEqual([
      { type: 'JobStats', jobId: 'warm', submittedAt: 0, startedAt: 0, endedAt: 4000, waitMs: 0, outcome: 'closed' },
      { type: 'JobStats', jobId: 'next', submittedAt: 1000, startedAt: 4000, endedAt: 4000, waitMs: 3000, outcome: 'succeeded' },
    ]);
  });

  it('takes runMs from the runtimeMs hint when an arrival gives none', () => {
    const lines = run({ nodes: [slots('n1', 1)], workload: [{ at: 0, submit: job('a', 1, { runtimeMs: 7000 }) }] });
    expect(stats(lines)[0]).toMatchObject({ endedAt: 7000 });
  });

  it('stops at until: a gang still running then has no end, and utilisation counts to until', () => {
    const lines = run({ nodes: [slots('n1', 2)], workload: [{ at: 0, submit: job('a', 1), runMs: 60_000 }], until: 10_000 });
    expect(stats(lines)[0]).toMatchObject({ startedAt: 0, endedAt: null, waitMs: 0, outcome: 'running' });
    expect(summary(lines)).toMatchObject({ at: 10_000, utilisation: { slots: 0.5 }, slowdown: { max: 1 } });
  });

  it('runs a parsed workload given as an object, with the nodes validated', () => {
    const r = runScenario({ nodes: [{ id: 'bad id', capacity: { cpu: 1, memoryMb: 1 } }], workload: [] });
    expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/^nodes\.0\.id/) });
    const empty = runScenario({ nodes: [slots('n1', 1)], workload: [] });
    expect(empty.ok && JSON.parse(empty.lines.at(-1)!)).toMatchObject({ type: 'Summary', at: 0, wait: { mean: null }, utilisation: { cpu: null } });
  });

  const entry = { at: 0, submit: job('a', 1), runMs: 1000 };
  it.each([
    ['both steps and workload', { steps: [], workload: [] }, /both steps and workload/],
    ['neither steps nor workload', { nodes: [] }, /needs steps .* or workload/],
    ['queues that are not a list', { workload: [], queues: 3 }, /^scenario: queues must be an array/],
    ['a bad queue', { workload: [], queues: [{ name: 'a', guaranteed: { gpus: -1 } }] }, /^queues\.0\.guaranteed\.gpus/],
    ['until with steps', { steps: [], until: 5 }, /until belongs to a workload/],
    ['a workload that is not a list', { workload: {} }, /^workload: must be an array/],
    ['a negative at', { workload: [{ ...entry, at: -1 }] }, /^workload\.0\.at: must be an integer ≥ 0/],
    ['a fractional at', { workload: [{ ...entry, at: 1.5 }] }, /^workload\.0\.at: must be an integer/],
    ['a missing at', { workload: [{ submit: entry.submit, runMs: 1 }] }, /^workload\.0\.at: required/],
    ['arrivals out of order', { workload: [{ ...entry, at: 5 }, { ...entry, at: 2 }] }, /^workload\.1\.at: 2 is before the arrival above it \(5\)/],
    ['an arrival after until', { workload: [{ ...entry, at: 50 }], until: 10 }, /^workload\.0\.at: 50 is after until \(10\)/],
    ['a negative runMs', { workload: [{ ...entry, runMs: -3 }] }, /^workload\.0\.runMs: must be an integer ≥ 0/],
    ['no runMs and no hint', { workload: [{ at: 0, submit: job('a', 1) }] }, /^workload\.0\.runMs: required/],
    ['no submit', { workload: [{ at: 0, runMs: 1 }] }, /^workload\.0\.submit: required/],
    ['an unknown key in an arrival', { workload: [{ ...entry, node: 'n1' }] }, /^workload\.0\.node: unknown field/],
    ['an arrival that is not an object', { workload: [3] }, /^workload\.0: must be an object/],
    ['a bad until', { workload: [], until: 'soon' }, /^until: must be an integer/],
    ['a bad policy', { workload: [], policy: { reserveDepth: -1 } }, /^policy\.reserveDepth/],
    ['an unknown policy field', { workload: [], policy: { depth: 1 } }, /^policy\.depth: unknown field/],
    ['an unknown top-level key', { workload: [], later: 1 }, /unknown field later/],
  ])('fails clearly on %s', (_what, scenario, message) => {
    const r = runScenarioText(JSON.stringify(scenario));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });

  it('rejects a bad policy given on the command line, naming the field', () => {
    const r = runScenarioText(JSON.stringify({ workload: [] }), { policy: { reserveDepth: 'many' } });
    expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/command line: reserveDepth/) });
  });
});
