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
  });

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

  it.each([
    ['not JSON', '{', /not valid JSON/],
    ['an unknown step', '{"nodes": [], "steps": [{"launch": {}}]}', /steps\.0: unknown step/],
    ['two keys in a step', '{"nodes": [], "steps": [{"schedule": {}, "advanceMs": 1}]}', /steps\.0: unknown step/],
    ['a bad field in a step', '{"nodes": [], "steps": [{"advanceMs": -5}]}', /steps\.0\.advanceMs/],
    ['a bad node', '{"nodes": [{"id": "n 1", "capacity": {"cpu": 1, "memoryMb": 1}}], "steps": []}', /nodes\.0\.id/],
    ['an unknown top-level field', '{"nodes": [], "steps": [], "extra": 1}', /unknown field extra/],
  ])('fails clearly on %s', (_what, text, message) => {
    const r = runScenarioText(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });
});
