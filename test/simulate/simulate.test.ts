import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenarioText } from '@muster/core';

const dir = new URL('../../examples/scenarios/', import.meta.url).pathname;
const scenarios = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('muster simulate (the scenario runner)', () => {
  it.each(scenarios)('prints the same bytes on every run of %s, ending with a Summary', (file) => {
    const text = readFileSync(join(dir, file), 'utf8');
    const first = runScenarioText(text);
    const second = runScenarioText(text);
    expect(first.ok).toBe(true);
    expect(second).toEqual(first);
    const lines = first.ok ? first.lines : [];
    expect(JSON.parse(lines[lines.length - 1]!)).toMatchObject({ type: 'Summary' });
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    // mixed-workload.json, run twice, takes 25 s of a loaded 2-core machine and over 60 s at load 15
  }, 180_000);

  it('answers an invalid job with a JobRejected line naming the field, and goes on', () => {
    const r = runScenarioText(readFileSync(join(dir, 'basic.json'), 'utf8'));
    const lines = r.ok ? r.lines.map((l) => JSON.parse(l) as Record<string, unknown>) : [];
    expect(lines).toContainEqual(expect.objectContaining({ type: 'JobRejected', jobId: 'bad', reason: expect.objectContaining({ category: 'invalid', path: 'minInstances' }) }));
    expect(lines.some((l) => l.type === 'GangCommitted' && l.jobId === 'zone-b')).toBe(true);
  });

  it('places 7 members over hosts of 3, 2 and 2 free slots as 3,2,2 and holds nothing for a gang of 8', () => {
    const r = runScenarioText(readFileSync(join(dir, 'basic.json'), 'utf8'));
    const lines = r.ok ? r.lines.map((l) => JSON.parse(l) as { type: string; jobId: string; allocations?: { node: string; members: number[] }[]; reason?: { category: string } }) : [];
    const seven = lines.find((l) => l.type === 'GangCommitted' && l.jobId === 'seven');
    expect(seven?.allocations?.map((a) => a.members.length).sort()).toEqual([2, 2, 3]);
    const big = lines.find((l) => l.type === 'GangAborted' && l.jobId === 'too-big');
    expect(big?.reason?.category).toBe('placement-unsatisfiable');
  });

  it('a done step finishes one member: its slot goes to the job waiting for it, the rest of the gang runs on', () => {
    const node = { id: 'n1', capacity: { cpu: 4000, memoryMb: 4096, slots: 2 }, gpus: [] };
    const job = (id: string, tasks: number) => ({ id, identity: { user: 'u' }, tasks, resources: { cpu: 100, memoryMb: 64 } });
    const steps = [
      { submit: job('pair', 2) }, { schedule: {} }, { submit: job('next', 1) }, { schedule: {} },
      { done: { jobId: 'pair', member: 1 } }, { schedule: {} },
      { done: { jobId: 'ghost', member: 0 } },
    ];
    const r = runScenarioText(JSON.stringify({ nodes: [node], steps }));
    const lines = r.ok ? r.lines.map((l) => JSON.parse(l) as { type: string; jobId?: string; reason?: { category: string } }) : [];
    expect(lines.filter((l) => l.type === 'GangCommitted').map((l) => l.jobId)).toEqual(['pair', 'next']);
    expect(lines).toContainEqual(expect.objectContaining({ type: 'GangAborted', jobId: 'next', reason: expect.objectContaining({ category: 'insufficient-resources' }) }));
    // a member of an unknown job is an input the scheduler rejects, as it would from an agent
    expect(lines).toContainEqual(expect.objectContaining({ type: 'InputRejected', reason: expect.objectContaining({ category: 'unknown' }) }));
    expect(JSON.parse(r.ok ? r.lines.at(-1)! : '{}')).toMatchObject({ jobs: { running: 2 } });
  });

  it.each([
    ['not JSON', '{', /not valid JSON/],
    ['an unknown step', '{"nodes": [], "steps": [{"launch": {}}]}', /steps\.0: unknown step/],
    ['two keys in a step', '{"nodes": [], "steps": [{"schedule": {}, "advanceMs": 1}]}', /steps\.0: unknown step/],
    ['a bad field in a step', '{"nodes": [], "steps": [{"advanceMs": -5}]}', /steps\.0\.advanceMs/],
    ['a bad node', '{"nodes": [{"id": "n 1", "capacity": {"cpu": 1, "memoryMb": 1}}], "steps": []}', /nodes\.0\.id/],
    ['an unknown top-level field', '{"nodes": [], "steps": [], "extra": 1}', /unknown field extra/],
    ['a done step with a negative member', '{"nodes": [], "steps": [{"done": {"jobId": "j1", "member": -1}}]}', /steps\.0\.done\.member/],
    ['a done step with an unknown field', '{"nodes": [], "steps": [{"done": {"jobId": "j1", "member": 0, "node": "n1"}}]}', /steps\.0\.done/],
  ])('fails clearly on %s', (_what, text, message) => {
    const r = runScenarioText(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });
});
