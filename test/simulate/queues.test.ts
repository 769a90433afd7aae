// Queues in `muster simulate` (DESIGN.md §12): the `queue` step and a scenario's top-level `queues`
// go through the same ingest as `muster.in.queue.<name>.set` on the leader: validated, refused with
// the field's path and nothing applied, and once a queue exists jobs must name a leaf queue.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runScenarioText } from '@muster/core';

type Line = { type: string; jobId?: string; subject?: string; reason?: { category: string; path?: string; message: string; by?: string } } & Record<string, unknown>;

const gpuNode = (id: string, gpus: number) => ({
  id,
  capacity: { cpu: 64_000, memoryMb: 262_144 },
  gpus: Array.from({ length: gpus }, (_, g) => ({ id: g, memoryMb: 16_384, model: 'T4', nvlinkDomain: 0 })),
});
const job = (id: string, queue: string, extra: Record<string, unknown> = {}) => ({
  id,
  identity: { user: `u-${queue}`, queue, project: 'p' },
  tasks: 1,
  resources: { cpu: 1000, memoryMb: 1024, gpus: 1 },
  ...extra,
});

function run(scenario: unknown): Line[] {
  const r = runScenarioText(JSON.stringify(scenario));
  if (!r.ok) throw new Error(r.error);
  return r.lines.map((l) => JSON.parse(l) as Line);
}

const rejections = (lines: Line[]) => lines.filter((l) => l.type === 'InputRejected' || l.type === 'JobRejected');

describe('queues in muster simulate', () => {
  it('a queue step defines a queue; then a job must name a defined leaf queue', () => {
    const lines = run({
      nodes: [gpuNode('n1', 4)],
      steps: [
        { submit: job('before', 'anything') },
        { queue: { name: 'research', guaranteed: { gpus: 4 } } },
        { queue: { name: 'vision', parent: 'research', guaranteed: { gpus: 2 } } },
        { submit: job('v1', 'vision') },
        { submit: job('nowhere', 'no-such-queue') },
        { submit: job('inner', 'research') },
        { schedule: {} },
      ],
    });
    expect(rejections(lines)).toEqual([
      expect.objectContaining({ type: 'JobRejected', jobId: 'nowhere', reason: expect.objectContaining({ category: 'unknown', path: 'identity.queue' }) }),
      expect.objectContaining({ type: 'JobRejected', jobId: 'inner', reason: expect.objectContaining({ category: 'invalid', path: 'identity.queue' }) }),
    ]);
    // the job accepted before any queue existed stays in the implicit default queue, and runs
    expect(lines.filter((l) => l.type === 'GangCommitted').map((l) => l.jobId).sort()).toEqual(['before', 'v1']);
  });

  it.each([
    ['a negative guarantee', { name: 'q', guaranteed: { gpus: -1 } }, 'invalid', 'guaranteed.gpus'],
    ['an unknown field', { name: 'q', quota: { gpus: 1 } }, 'invalid', 'quota'],
    ['a guarantee above its own max', { name: 'q', guaranteed: { gpus: 8 }, max: { gpus: 4 } }, 'invalid', 'guaranteed.gpus'],
    ['a parent that does not exist', { name: 'q', parent: 'ghost' }, 'unknown', 'parent'],
    ['a name that is no subject token', { name: 'a.b' }, 'invalid', 'name'],
    ['no name', { guaranteed: { gpus: 1 } }, 'invalid', 'name'],
    ['a zero weight', { name: 'q', weight: 0 }, 'invalid', 'weight'],
    ['a default limit above the maximum', { name: 'q', defaultRuntimeLimitMs: 10, maxRuntimeLimitMs: 5 }, 'invalid', 'defaultRuntimeLimitMs'],
  ])('refuses %s with the field\'s path, and applies nothing', (_what, spec, category, path) => {
    const lines = run({ nodes: [gpuNode('n1', 1)], steps: [{ queue: spec }, { submit: job('j', 'default') }, { schedule: {} }] });
    expect(rejections(lines)).toEqual([expect.objectContaining({ type: 'InputRejected', reason: expect.objectContaining({ category, path }) })]);
    // nothing applied: no queue is defined, so a job in the implicit default queue is still accepted and runs
    expect(lines.some((l) => l.type === 'GangCommitted' && l.jobId === 'j')).toBe(true);
  });

  it('refuses a cycle: a queue cannot move below its own child, nor be its own parent', () => {
    const lines = run({
      nodes: [gpuNode('n1', 1)],
      steps: [{ queue: { name: 'top' } }, { queue: { name: 'mid', parent: 'top' } }, { queue: { name: 'top', parent: 'mid' } }, { queue: { name: 'mid', parent: 'mid' } }],
    });
    expect(rejections(lines)).toEqual([
      expect.objectContaining({ type: 'InputRejected', subject: 'muster.in.queue.top.set', reason: expect.objectContaining({ category: 'invalid', path: 'parent', message: expect.stringMatching(/cycle/) }) }),
      expect.objectContaining({ type: 'InputRejected', subject: 'muster.in.queue.mid.set', reason: expect.objectContaining({ category: 'invalid', path: 'parent', message: expect.stringMatching(/own parent/) }) }),
    ]);
  });

  it('a queue\'s runtime-limit maximum bounds its jobs, and its default is given to those that set none', () => {
    const lines = run({
      nodes: [gpuNode('n1', 2)],
      queues: [{ name: 'batch', defaultRuntimeLimitMs: 2000, maxRuntimeLimitMs: 5000 }],
      steps: [
        { submit: job('long', 'batch', { runtimeLimitMs: 9000 }) },
        { submit: job('plain', 'batch') },
        { schedule: {} },
        { advanceMs: 2000 },
        { schedule: {} },
      ],
    });
    expect(rejections(lines)).toEqual([expect.objectContaining({ jobId: 'long', reason: expect.objectContaining({ category: 'invalid', path: 'runtimeLimitMs' }) })]);
    expect(lines.find((l) => l.type === 'GangAborted' && l.jobId === 'plain')).toMatchObject({ final: true, reason: { category: 'runtime-limit' } });
  });

  it('top-level queues are set before the first step, parents first; one the ingest refuses fails the scenario naming it', () => {
    const ok = run({ nodes: [gpuNode('n1', 1)], queues: [{ name: 'a' }, { name: 'a1', parent: 'a' }], steps: [{ submit: job('j', 'a1') }, { schedule: {} }] });
    expect(ok.some((l) => l.type === 'GangCommitted' && l.jobId === 'j')).toBe(true);
    const bad = runScenarioText(JSON.stringify({ nodes: [], queues: [{ name: 'a1', parent: 'a' }, { name: 'a' }], steps: [] }));
    expect(bad).toEqual({ ok: false, error: expect.stringMatching(/^queues\.0\.parent: unknown queue a/) });
  });

  it.each([
    ['queues that are not a list', { steps: [], queues: { name: 'a' } }, /^scenario: queues must be an array/],
    ['a queue with a bad field', { steps: [], queues: [{ name: 'a' }, { name: 'b', max: { gpus: 'all' } }] }, /^queues\.1\.max\.gpus/],
    ['a workload queue with an unknown field', { workload: [], queues: [{ name: 'a', limit: 1 }] }, /^queues\.0\.limit: unknown field/],
    ['a workload queue whose parent is unknown', { workload: [], queues: [{ name: 'b', parent: 'a' }] }, /^queues\.0\.parent: unknown queue a/],
  ])('fails clearly on %s', (_what, scenario, message) => {
    const r = runScenarioText(JSON.stringify(scenario));
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toMatch(message);
  });

  it('a workload runs with its top-level queues applied before the first instant', () => {
    const lines = run({
      nodes: [gpuNode('n1', 2)],
      queues: [{ name: 'a', guaranteed: { gpus: 1 } }, { name: 'b', guaranteed: { gpus: 1 } }],
      workload: [
        { at: 0, submit: job('a1', 'a'), runMs: 1000 },
        { at: 0, submit: job('b1', 'b'), runMs: 1000 },
        { at: 0, submit: job('x', 'default'), runMs: 1000 },
      ],
    });
    expect(rejections(lines)).toEqual([expect.objectContaining({ jobId: 'x', reason: expect.objectContaining({ path: 'identity.queue' }) })]);
    expect(lines.filter((l) => l.type === 'JobStats').map((l) => [l.jobId, l.outcome])).toEqual([['a1', 'succeeded'], ['b1', 'succeeded']]);
  });
  it('examples/scenarios/two-teams.json: b reclaims its guarantee from a, whole gangs, in the session that tries it; the victims run again when b is done', () => {
    const lines = run(JSON.parse(readFileSync(new URL('../../examples/scenarios/two-teams.json', import.meta.url), 'utf8')));
    const preempted = lines.filter((l) => l.type === 'GangAborted' && l.reason?.category === 'preempted');
    expect(preempted.map((l) => [l.jobId, l.final, l.reason?.by])).toEqual([['a1', false, 'b1'], ['a2', false, 'b2']]);
    const commits = lines.filter((l) => l.type === 'GangCommitted');
    // b's gangs commit in the session of their victims' aborts, with no wait before
    for (const p of preempted) expect(commits.find((c) => c.jobId === p.reason?.by)?.session).toBe(p.session);
    expect(lines.some((l) => l.type === 'GangAborted' && (l.jobId === 'b1' || l.jobId === 'b2'))).toBe(false);
    // requeued, the victims commit again once b's gangs are done
    expect(commits.filter((c) => c.jobId === 'a1' || c.jobId === 'a2').map((c) => c.at)).toEqual([0, 0, 61_000, 61_000]);
    expect(lines.at(-1)).toMatchObject({ type: 'Summary', jobs: { running: 4, succeeded: 2 } });
  });
});
