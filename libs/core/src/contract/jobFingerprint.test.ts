import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { ByteScratch } from '../byteWriter.ts';
import { designAlternativesExample, designJobSpecExample } from './testing/designExamples.ts';
import { alternativeFingerprints, jobFingerprint, unsatisfiableKey } from './jobFingerprint.ts';
import type { JobSpec, PlainJobSpec, RoleSpec } from './types.ts';
import { validateJobSpec } from './validateJobSpec.ts';

function spec(change: (s: PlainJobSpec) => void = () => {}): PlainJobSpec {
  const result = validateJobSpec(designJobSpecExample());
  if (!result.ok || result.value.alternatives !== undefined) throw new Error('the example is a plain job');
  change(result.value);
  return result.value;
}

// Rebuilds every object with its keys in reverse order.
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reverseKeys(v)]));
}

describe('jobFingerprint', () => {
  const base = jobFingerprint(spec());

  it('is 16 hex digits, stable across calls and key order', () => {
    expect(base).toMatch(/^[0-9a-f]{16}$/);
    expect(jobFingerprint(spec())).toBe(base);
    expect(jobFingerprint(reverseKeys(spec()) as JobSpec)).toBe(base);
    const revalidated = validateJobSpec(reverseKeys(designJobSpecExample()));
    expect(revalidated.ok && jobFingerprint(revalidated.value)).toBe(base);
  });

  it('is the same through a hasher (a reused scratch and a native SHA-256), call after call', () => {
    const hasher = { scratch: new ByteScratch(), digest: (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex') };
    expect(jobFingerprint(spec(), hasher)).toBe(base);
    const other = spec((s) => { s.roles[0]!.count += 1; });
    expect(jobFingerprint(other, hasher)).toBe(jobFingerprint(other));
    expect(jobFingerprint(spec(), hasher)).toBe(base);
  });

  it.each<[string, (s: PlainJobSpec) => void]>([
    ['id', (s) => { s.id = 'other'; }],
    ['identity', (s) => { s.identity = { user: 'bob', queue: 'q', project: 'x' }; }],
    ['priority', (s) => { s.priority = 99; }],
    ['timeoutMs', (s) => { s.timeoutMs = 1; }],
    ['runtimeMs', (s) => { delete s.runtimeMs; }],
    ['minInstances', (s) => { s.minInstances = 3; }],
    ['command and env', (s) => { Object.assign(s.roles[0] as object, { command: ['x'], env: { A: 'b' } }); }],
    ['role names', (s) => { (s.roles[0] as { name: string }).name = 'renamed'; }],
    ['select spacing and quotes', (s) => { s.select = ' zone=="a"&&gpu_model in ( "A100" , "H100" ) '; }],
  ])('ignores %s', (_name, change) => {
    expect(jobFingerprint(spec(change))).toBe(base);
  });

  it.each<[string, (s: PlainJobSpec) => void]>([
    ['a count', (s) => { (s.roles[1] as { count: number }).count = 3; }],
    ['cpu', (s) => { (s.roles[0] as RoleSpec).resources.cpu = 1001; }],
    ['memoryMb', (s) => { (s.roles[0] as RoleSpec).resources.memoryMb = 1; }],
    ['gpus', (s) => { (s.roles[1] as RoleSpec).resources.gpus = 2; }],
    ['gpuMemoryMb', (s) => { (s.roles[1] as RoleSpec).resources.gpuMemoryMb = 1; }],
    ['role order', (s) => { s.roles.reverse(); }],
    ['an extra role', (s) => { s.roles.push({ name: 'x', count: 1, resources: { cpu: 0, memoryMb: 0, gpus: 0, gpuMemoryMb: 0 } }); }],
    ['policy', (s) => { s.placement.policy = 'spread'; }],
    ['ptile', (s) => { s.placement.ptile = 2; }],
    ['no ptile', (s) => { delete s.placement.ptile; }],
    ['gpuLocality', (s) => { s.placement.gpuLocality = true; }],
    ['select', (s) => { s.select = "zone == 'b' && gpu_model in ('A100','H100')"; }],
    ['an empty select', (s) => { s.select = ''; }],
  ])('changes with %s', (_name, change) => {
    expect(jobFingerprint(spec(change))).not.toBe(base);
  });
});

describe('alternativeFingerprints (DESIGN.md §13)', () => {
  function alternativesSpec(change: (s: Record<string, unknown>) => void = () => {}): JobSpec {
    const input = designAlternativesExample();
    change(input);
    const result = validateJobSpec(input);
    if (!result.ok) throw new Error(result.error.message);
    return result.value;
  }

  it('gives each variant the fingerprint of a job asking for that request alone, and the job one over the list', () => {
    const spec = alternativesSpec();
    const [first, second] = alternativeFingerprints(spec);
    // the first variant is the §4 example's request
    expect(first).toBe(jobFingerprint((validateJobSpec(designJobSpecExample()) as { value: JobSpec }).value));
    expect(second).not.toBe(first);
    expect(jobFingerprint(spec)).toMatch(/^[0-9a-f]{16}$/);
    expect(jobFingerprint(spec)).not.toBe(first);
    expect(jobFingerprint(spec)).not.toBe(second);
    expect(alternativeFingerprints((validateJobSpec(designJobSpecExample()) as { value: JobSpec }).value)).toEqual([]);
  });

  it('changes with a variant and with their order, not with the rest of the job', () => {
    const base = jobFingerprint(alternativesSpec());
    expect(jobFingerprint(alternativesSpec((s) => { s.priority = 7; s.id = 'other'; }))).toBe(base);
    expect(jobFingerprint(alternativesSpec((s) => { (s.alternatives as unknown[]).reverse(); }))).not.toBe(base);
    const changed = alternativesSpec((s) => { ((s.alternatives as Record<string, unknown>[])[1]!).tasks = 5; });
    expect(jobFingerprint(changed)).not.toBe(base);
    expect(alternativeFingerprints(changed)[0]).toBe(alternativeFingerprints(alternativesSpec())[0]);
  });
});

describe('unsatisfiableKey', () => {
  it('keeps identities apart even when joining them naively would collide', () => {
    const a = unsatisfiableKey('f', { user: 'a/b', queue: 'c', project: 'd' });
    const b = unsatisfiableKey('f', { user: 'a', queue: 'b/c', project: 'd' });
    expect(a).not.toBe(b);
    expect(unsatisfiableKey('f', { user: 'a', queue: 'b', project: 'c' })).toBe(unsatisfiableKey('f', { user: 'a', queue: 'b', project: 'c' }));
    expect(unsatisfiableKey('f', { user: 'a', queue: 'b', project: 'c' })).not.toBe(unsatisfiableKey('g', { user: 'a', queue: 'b', project: 'c' }));
  });
});
