import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runScenarioText } from '@muster/core';
import type { GangAborted, GangCommitted, JobRejected } from '@muster/core';

// examples/scenarios/alternatives.json (docs/job-spec.md): alternative requests through `muster simulate`.

const text = readFileSync(new URL('../../examples/scenarios/alternatives.json', import.meta.url), 'utf8');

function run(): string[] {
  const r = runScenarioText(text, {});
  if (!r.ok) throw new Error(r.error);
  return r.lines;
}

describe('the alternatives example scenario', () => {
  it('train commits on its second alternative (4 H100s) while the A100s are half taken; train2 waits, then takes its first', () => {
    const lines = run().map((l) => JSON.parse(l) as { type: string; jobId?: string | null });
    const commits = lines.filter((l): l is GangCommitted => l.type === 'GangCommitted');
    const train = commits.find((c) => c.jobId === 'train')!;
    expect(train.alternative).toBe(1);
    expect(train.allocations.map((a) => [a.node, a.members.length])).toEqual([['h100-1', 4]]);
    // the job without alternatives prints as it always did
    expect(commits.find((c) => c.jobId === 'warm')).not.toHaveProperty('alternative');
    // train2: its first variant from the cache (train found it short), its second run and short too
    const waits = lines.filter((l): l is GangAborted => l.type === 'GangAborted' && l.jobId === 'train2');
    expect(waits).toHaveLength(1);
    expect(waits[0]!.reason).toMatchObject({ category: 'insufficient-resources', alternatives: [{ category: 'insufficient-resources', cached: true }, { category: 'insufficient-resources' }] });
    // warm done at 60 s: the A100s are free, and train2 takes its first variant
    expect(commits.find((c) => c.jobId === 'train2')).toMatchObject({ alternative: 0, at: 60_000 });
    // a bad select in an alternative is rejected with its path
    const bad = lines.find((l): l is JobRejected => l.type === 'JobRejected' && l.jobId === 'bad')!;
    expect(bad.reason).toMatchObject({ category: 'invalid', path: 'alternatives.1.select' });
  });

  it('prints the same lines on every run', () => {
    expect(run()).toEqual(run());
  });
});
