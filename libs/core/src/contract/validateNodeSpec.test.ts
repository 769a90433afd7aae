import { describe, expect, it } from 'vitest';
import { BAD_NODE_SPECS, brokenNodeSpec } from './testing/badSpecs.ts';
import { designNodeSpecExample } from './testing/designExamples.ts';
import { validateNodeSpec } from './validateNodeSpec.ts';

describe('validateNodeSpec', () => {
  it('accepts the DESIGN.md example unchanged', () => {
    expect(validateNodeSpec(designNodeSpecExample())).toEqual({ ok: true, value: designNodeSpecExample() });
  });

  it('fills in defaults, sorts GPUs by id and labels by name', () => {
    const result = validateNodeSpec({
      id: 'n2',
      labels: { zone: 'b', rack: 3 },
      capacity: { cpu: 4000, memoryMb: 1024 },
      gpus: [
        { id: 2, memoryMb: 10, model: 'H100', nvlinkDomain: 1 },
        { id: 0, memoryMb: 10, model: 'H100' },
      ],
    });
    expect(result).toEqual({
      ok: true,
      value: {
        id: 'n2',
        labels: { rack: 3, zone: 'b' },
        capacity: { cpu: 4000, memoryMb: 1024 },
        gpus: [
          { id: 0, memoryMb: 10, model: 'H100', nvlinkDomain: 0 },
          { id: 2, memoryMb: 10, model: 'H100', nvlinkDomain: 1 },
        ],
      },
    });
    expect(result.ok && Object.keys(result.value.labels)).toEqual(['rack', 'zone']);
    expect(result.ok && result.value.capacity).not.toHaveProperty('slots');
  });

  it('defaults labels and gpus to empty', () => {
    expect(validateNodeSpec({ id: 'n3', capacity: { cpu: 0, memoryMb: 0, slots: 0 } })).toEqual({
      ok: true,
      value: { id: 'n3', labels: {}, capacity: { cpu: 0, memoryMb: 0, slots: 0 }, gpus: [] },
    });
  });

  it('accepts label names with dots and dashes, and numeric label values', () => {
    const spec = { ...designNodeSpecExample(), labels: { 'topology.kubernetes.io-zone': 'a', cores: 16, ratio: -0.5 } };
    expect(validateNodeSpec(spec).ok).toBe(true);
  });

  it.each(BAD_NODE_SPECS)('rejects %s with its path', (_name, mutate, path, message) => {
    expect(validateNodeSpec(brokenNodeSpec(mutate))).toEqual({ ok: false, error: { path, message } });
  });
});
