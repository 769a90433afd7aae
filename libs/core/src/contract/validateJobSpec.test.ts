import { describe, expect, it } from 'vitest';
import { designAlternativesExample, designJobSpecExample, designShorthandExample } from './testing/designExamples.ts';
import { BAD_JOB_SPECS, brokenJobSpec } from './testing/badSpecs.ts';
import { validateJobSpec } from './validateJobSpec.ts';

describe('validateJobSpec', () => {
  it('accepts the DESIGN.md example and normalises it', () => {
    expect(validateJobSpec(designJobSpecExample())).toEqual({
      ok: true,
      value: {
        id: 'j1',
        identity: { user: 'alice', queue: 'default', project: 'p1' },
        priority: 0,
        roles: [
          { name: 'world', count: 1, resources: { cpu: 1000, memoryMb: 2048, gpus: 0, gpuMemoryMb: 0 } },
          { name: 'agent', count: 2, resources: { cpu: 200, memoryMb: 256, gpus: 1, gpuMemoryMb: 4096 } },
        ],
        placement: { policy: 'pack', ptile: 4, gpuLocality: false },
        select: "zone == 'a' && gpu_model in ('A100','H100')",
        minInstances: 0,
        timeoutMs: 600000,
        runtimeMs: 5000,
      },
    });
  });

  it('expands the tasks/resources shorthand into one role named task, with defaults', () => {
    expect(validateJobSpec(designShorthandExample())).toEqual({
      ok: true,
      value: {
        id: 'j7',
        identity: { user: 'bob', queue: 'default', project: 'default' },
        priority: 0,
        roles: [{ name: 'task', count: 7, resources: { cpu: 500, memoryMb: 1024, gpus: 0, gpuMemoryMb: 0 } }],
        placement: { policy: 'pack', gpuLocality: false },
        select: '',
        minInstances: 0,
      },
    });
  });

  it('keeps command and env, and leaves out optional fields that were not given', () => {
    const spec = designJobSpecExample();
    const roles = spec.roles as Record<string, unknown>[];
    Object.assign(roles[0] as object, { command: ['python', '-m', 'world'], env: { SEED: '1' } });
    Object.assign(roles[1] as object, { command: 'run-agent --fast' });
    delete spec.timeoutMs;
    delete spec.runtimeMs;
    delete (spec.placement as Record<string, unknown>).ptile;
    const result = validateJobSpec(spec);
    if (!result.ok || result.value.roles === undefined) throw new Error('expected a plain job');
    expect(result.value.roles[0]).toMatchObject({ command: ['python', '-m', 'world'], env: { SEED: '1' } });
    expect(result.value.roles[1]).toMatchObject({ command: 'run-agent --fast' });
    expect(result.value.roles[1]).not.toHaveProperty('env');
    expect(result.value).not.toHaveProperty('timeoutMs');
    expect(result.value).not.toHaveProperty('runtimeMs');
    expect(result.value.placement).not.toHaveProperty('ptile');
  });

  it('normalises alternatives (DESIGN.md §13): each variant a full request, with no top-level request', () => {
    expect(validateJobSpec(designAlternativesExample())).toEqual({
      ok: true,
      value: {
        id: 'j2',
        identity: { user: 'alice', queue: 'default', project: 'p1' },
        priority: 0,
        alternatives: [
          {
            roles: [
              { name: 'world', count: 1, resources: { cpu: 1000, memoryMb: 2048, gpus: 0, gpuMemoryMb: 0 } },
              { name: 'agent', count: 2, resources: { cpu: 200, memoryMb: 256, gpus: 1, gpuMemoryMb: 4096 } },
            ],
            placement: { policy: 'pack', ptile: 4, gpuLocality: false },
            select: "zone == 'a' && gpu_model in ('A100','H100')",
          },
          {
            roles: [{ name: 'task', count: 4, resources: { cpu: 500, memoryMb: 1024, gpus: 1, gpuMemoryMb: 0 } }],
            placement: { policy: 'pack', gpuLocality: false },
            select: "gpu_model == 'H100'",
          },
        ],
        minInstances: 0,
        timeoutMs: 600000,
        runtimeMs: 5000,
      },
    });
  });

  it('accepts minInstances of either alternative\'s gang size (the committed one is kept warm)', () => {
    expect(validateJobSpec({ ...designAlternativesExample(), minInstances: 3 })).toMatchObject({ ok: true, value: { minInstances: 3 } });
    expect(validateJobSpec({ ...designAlternativesExample(), minInstances: 4 })).toMatchObject({ ok: true, value: { minInstances: 4 } });
  });

  it('is idempotent: a normalised spec validates to itself', () => {
    for (const input of [designJobSpecExample(), designShorthandExample(), designAlternativesExample()]) {
      const once = validateJobSpec(input);
      if (!once.ok) throw new Error(once.error.message);
      expect(validateJobSpec(structuredClone(once.value))).toEqual(once);
    }
  });

  it('accepts minInstances equal to the gang size, and rejects 3 for a gang of 4', () => {
    const gang = { ...designShorthandExample(), tasks: 4 };
    expect(validateJobSpec({ ...gang, minInstances: 4 })).toMatchObject({ ok: true, value: { minInstances: 4 } });
    expect(validateJobSpec({ ...gang, minInstances: 3 })).toEqual({
      ok: false,
      error: { path: 'minInstances', message: 'minInstances: must be 0 or the gang size 4 (got 3)' },
    });
  });

  it('accepts every policy, ptile with pack, and an empty or blank select', () => {
    for (const policy of ['pack', 'spread', 'same-node']) {
      const spec = { ...designShorthandExample(), placement: { policy, gpuLocality: true }, select: '  ' };
      expect(validateJobSpec(spec)).toMatchObject({ ok: true, value: { placement: { policy, gpuLocality: true } } });
    }
  });

  it('accepts a gang of exactly 4096 members', () => {
    const spec = designJobSpecExample();
    const roles = spec.roles as Record<string, unknown>[];
    (roles[0] as Record<string, unknown>).count = 4094;
    expect(validateJobSpec(spec).ok).toBe(true);
  });

  it.each(BAD_JOB_SPECS)('rejects %s with its path', (_name, mutate, path, message) => {
    expect(validateJobSpec(brokenJobSpec(mutate))).toEqual({ ok: false, error: { path, message } });
  });
});
