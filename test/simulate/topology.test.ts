import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runScenarioText } from '@muster/core';
import type { GangAborted, GangCommitted } from '@muster/core';

// examples/scenarios/topology-racks.json (docs/simulate.md): placement.topology through `muster simulate`.

const text = readFileSync(new URL('../../examples/scenarios/topology-racks.json', import.meta.url), 'utf8');

function run(): string[] {
  const r = runScenarioText(text, {});
  if (!r.ok) throw new Error(r.error);
  return r.lines;
}

const rackOf = (node: string): string => node.split('-')[0]!;
const racks = (c: GangCommitted): string[] => [...new Set(c.allocations.map((a) => rackOf(a.node)))].sort();

describe('the topology example scenario', () => {
  it('a required gang lands in one rack or waits for one; a preferred one spans the fewest racks', () => {
    const lines = run().map((l) => JSON.parse(l) as { type: string; jobId?: string });
    const commits = lines.filter((l): l is GangCommitted => l.type === 'GangCommitted');
    const commit = (id: string) => commits.find((c) => c.jobId === id)!;
    // train: 16 members, required: r1 has only 14 free slots (warm holds 2), so r2, on its first plan
    expect(racks(commit('train'))).toEqual(['r2']);
    // wide: 18 members, preferred: no rack holds it, so the two with the most room, r1 (14) and r3 (8)
    expect(racks(commit('wide'))).toEqual(['r1', 'r3']);
    expect(commit('wide').allocations.reduce((n, a) => n + a.members.length, 0)).toBe(18);
    // train2: required, no rack has 16 free slots while train runs: it waits, then takes r2 when train is done
    const abort = lines.find((l): l is GangAborted => l.type === 'GangAborted' && l.jobId === 'train2')!;
    expect(abort.reason.category).toBe('insufficient-resources');
    expect(commit('train2')).toMatchObject({ session: 3, at: 60_000 });
    expect(racks(commit('train2'))).toEqual(['r2']);
  });

  it('prints the same lines on every run', () => {
    expect(run()).toEqual(run());
  });
});
