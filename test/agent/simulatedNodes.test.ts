// The simulated cluster of `muster agent --simulate N` and `muster up`: valid, deterministic, mixed.
import { describe, expect, it } from 'vitest';
import { simulatedNodes } from '@muster/agent';
import { validateNodeSpec } from '@muster/core';

describe('simulatedNodes', () => {
  it('gives N valid NodeSpecs sim-1 … sim-N, the same every time', () => {
    const nodes = simulatedNodes(7);
    expect(nodes.map((n) => n.id)).toEqual(['sim-1', 'sim-2', 'sim-3', 'sim-4', 'sim-5', 'sim-6', 'sim-7']);
    for (const node of nodes) expect(validateNodeSpec(node)).toEqual({ ok: true, value: node });
    expect(simulatedNodes(7)).toEqual(nodes);
  });

  it('mixes CPU nodes and GPU nodes whose devices sit in NVLink domains, across two zones', () => {
    const nodes = simulatedNodes(6);
    expect(nodes.map((n) => n.gpus.length)).toEqual([0, 4, 8, 0, 4, 8]);
    expect(nodes[1]!.gpus.map((g) => g.nvlinkDomain)).toEqual([0, 0, 1, 1]);
    expect(nodes[2]!.gpus.map((g) => g.nvlinkDomain)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(new Set(nodes.map((n) => n.labels.zone))).toEqual(new Set(['a', 'b']));
    expect(nodes.map((n) => n.labels.gpu_model ?? null)).toEqual([null, 'A100', 'H100', null, 'A100', 'H100']);
  });

  it('refuses a count that is not a positive integer', () => {
    expect(() => simulatedNodes(0)).toThrow(RangeError);
    expect(() => simulatedNodes(1.5)).toThrow(RangeError);
  });
});
