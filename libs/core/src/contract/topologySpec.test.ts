import { describe, expect, it } from 'vitest';
import { jobFingerprint, unsatisfiableKey } from './jobFingerprint.ts';
import { jobSpecJsonSchema } from './specJsonSchemas.ts';
import { checkJsonSchema } from './testing/checkJsonSchema.ts';
import { designJobSpecExample } from './testing/designExamples.ts';
import type { JobSpec } from './types.ts';
import { validateJobSpec } from './validateJobSpec.ts';

// placement.topology (DESIGN.md §13): accepted, normalised, fingerprinted; bad input rejected by path.

function withTopology(topology: unknown): Record<string, unknown> {
  const spec = designJobSpecExample();
  (spec.placement as Record<string, unknown>).topology = topology;
  return spec;
}

function valid(input: unknown): JobSpec {
  const result = validateJobSpec(input);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe('placement.topology', () => {
  it('is kept as given, and absent stays absent', () => {
    expect(valid(withTopology({ key: 'rack', mode: 'required' })).placement).toEqual({ policy: 'pack', ptile: 4, gpuLocality: false, topology: { key: 'rack', mode: 'required' } });
    expect(valid(withTopology({ key: 'switch.block-1', mode: 'preferred' })).placement?.topology).toEqual({ key: 'switch.block-1', mode: 'preferred' });
    expect('topology' in (valid(designJobSpecExample()).placement ?? {})).toBe(false);
  });

  it('validating a normalised spec gives it back unchanged', () => {
    const spec = valid(withTopology({ key: 'rack', mode: 'preferred' }));
    expect(valid(JSON.parse(JSON.stringify(spec)))).toEqual(spec);
  });

  it.each<[string, unknown, string, string]>([
    ['a key with a space', { key: 'my rack', mode: 'required' }, 'placement.topology.key', 'placement.topology.key: label name must match [A-Za-z_][A-Za-z0-9_.-]*'],
    ['a key starting with a digit', { key: '1rack', mode: 'required' }, 'placement.topology.key', 'placement.topology.key: label name must match [A-Za-z_][A-Za-z0-9_.-]*'],
    ['an empty key', { key: '', mode: 'required' }, 'placement.topology.key', 'placement.topology.key: label name must match [A-Za-z_][A-Za-z0-9_.-]*'],
    ['the key __proto__', { key: '__proto__', mode: 'required' }, 'placement.topology.key', 'placement.topology.key: label name must match [A-Za-z_][A-Za-z0-9_.-]*'],
    ['a 129-character key', { key: 'k'.repeat(129), mode: 'required' }, 'placement.topology.key', 'placement.topology.key: must be at most 128 characters long'],
    ['a numeric key', { key: 5, mode: 'required' }, 'placement.topology.key', 'placement.topology.key: must be a string (got 5)'],
    ['no key', { mode: 'required' }, 'placement.topology.key', 'placement.topology.key: is required'],
    ['an unknown mode', { key: 'rack', mode: 'strict' }, 'placement.topology.mode', 'placement.topology.mode: must be one of "required", "preferred"'],
    ['no mode', { key: 'rack' }, 'placement.topology.mode', 'placement.topology.mode: must be one of "required", "preferred"'],
    ['an unknown field', { key: 'rack', mode: 'required', levels: 2 }, 'placement.topology.levels', 'placement.topology.levels: unknown field'],
    ['a string topology', 'rack', 'placement.topology', 'placement.topology: must be an object (got "rack")'],
  ])('rejects %s with its path', (_name, topology, path, message) => {
    const result = validateJobSpec(withTopology(topology));
    expect(result).toEqual({ ok: false, error: { path, message } });
    // the published JSON Schema rejects it too
    expect(checkJsonSchema(jobSpecJsonSchema(), withTopology(topology))).toBeDefined();
  });

  it('the JSON Schema accepts a topology, as zod does', () => {
    expect(checkJsonSchema(jobSpecJsonSchema(), withTopology({ key: 'rack', mode: 'required' }))).toBeUndefined();
  });
});

describe('the fingerprint with topology', () => {
  const plain = valid(designJobSpecExample());

  it('of a job without topology is what it was before topology existed', () => {
    // the value before contract v1.1's topology: the unsatisfiable cache and golden histories rely on it
    expect(jobFingerprint(plain)).toBe('18fe41d365682e1f');
  });

  it('tells apart no topology, each mode and each key', () => {
    const prints = [
      plain,
      valid(withTopology({ key: 'rack', mode: 'required' })),
      valid(withTopology({ key: 'rack', mode: 'preferred' })),
      valid(withTopology({ key: 'zone', mode: 'required' })),
    ].map((s) => jobFingerprint(s));
    expect(new Set(prints).size).toBe(4);
    expect(unsatisfiableKey(prints[0]!, plain.identity)).not.toBe(unsatisfiableKey(prints[1]!, plain.identity));
  });
});
