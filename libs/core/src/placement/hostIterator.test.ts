import { describe, expect, test } from 'vitest';
import type { NodeSpec } from '../contract/types.ts';
import { bucketDemand } from './bucketDemand.ts';
import { knownInfeasible, recordInfeasible } from './failureMemo.ts';
import { gangShape } from './gangShape.ts';
import type { HostSource } from './hostClass.ts';
import { HostIndex } from './hostIndex.ts';
import { HostIterator } from './hostIterator.ts';

function spec(id: string, cpu: number, slots?: number, gpus = 0): NodeSpec {
  return {
    id,
    labels: {},
    capacity: { cpu, memoryMb: 65536, ...(slots === undefined ? {} : { slots }) },
    gpus: Array.from({ length: gpus }, (_, g) => ({ id: g, memoryMb: 81920, model: 'A100', nvlinkDomain: g < gpus / 2 ? 0 : 1 })),
  };
}

function host(s: NodeSpec, usedCpu = 0, usedSlots = 0, gpusUsed: number[] = []): HostSource {
  return { spec: s, usedCpu, usedMemoryMb: 0, usedSlots, gpusUsed };
}

const role = gangShape({
  select: '',
  roles: [{ name: 'task', count: 8, resources: { cpu: 1000, memoryMb: 0, gpus: 0, gpuMemoryMb: 0 } }],
  placement: { policy: 'pack', gpuLocality: false },
}).roles[0]!;

function ranked(index: HostIndex, members: number, skip: (h: number) => boolean = () => false): string[] {
  return [...new HostIterator(index, bucketDemand(role, members, false), index.classes, 'on', skip)].map((h) => index.ids[h]!);
}

describe('HostIterator', () => {
  test('binpack: the host left with the least free capacity first, ties by node id', () => {
    const index = new HostIndex([host(spec('a', 8000), 0), host(spec('b', 8000), 6000), host(spec('c', 8000), 4000), host(spec('d', 8000), 4000)]);
    expect(ranked(index, 1)).toEqual(['b', 'c', 'd', 'a']);
    expect(ranked(index, 3)).toEqual(['c', 'd', 'a']);
  });

  test('a host too small for one bucket is still a candidate for a later, smaller one', () => {
    const index = new HostIndex([host(spec('small', 2000)), host(spec('big', 8000))]);
    expect(ranked(index, 4)).toEqual(['big']);
    expect(ranked(index, 2)).toEqual(['small', 'big']);
  });

  test('claimed hosts are skipped; exhaustion is -1 and stays so', () => {
    const index = new HostIndex([host(spec('a', 8000)), host(spec('b', 8000))]);
    const it = new HostIterator(index, bucketDemand(role, 1, false), index.classes, 'on', (h) => index.ids[h] === 'a');
    expect(index.ids[it.nextHost()]).toBe('b');
    expect(it.nextHost()).toBe(-1);
    expect(it.nextHost()).toBe(-1);
  });

  test('across classes of different sizes the score is the weighted free fraction left', () => {
    // small: 1000 of 4000 left after the bucket (25%); big: 7000 of 16000 (43.75%)
    const index = new HostIndex([host(spec('big', 16000), 8000), host(spec('small', 4000), 2000)]);
    expect(ranked(index, 1)).toEqual(['small', 'big']);
    // with 3000 used on small, 1000 left before: small cannot take it at all
    const full = new HostIndex([host(spec('big', 16000), 8000), host(spec('small', 4000), 3500)]);
    expect(ranked(full, 1)).toEqual(['big']);
  });

  test('debit and restore are exact and keep the ranking in step', () => {
    const index = new HostIndex([host(spec('a', 8000, 4, 4)), host(spec('b', 8000, 4, 4))]);
    const before = [...index.freeCpu, ...index.key, ...index.gpuFree, ...index.domFree];
    const undo = index.debit(1, 3000, 0, 2, [0, 1]);
    expect(ranked(index, 1)).toEqual(['b', 'a']);
    index.restore(undo);
    expect([...index.freeCpu, ...index.key, ...index.gpuFree, ...index.domFree]).toEqual(before);
    expect(ranked(index, 1)).toEqual(['a', 'b']);
  });

  test('a class known infeasible for a demand is not searched again for a larger one', () => {
    const index = new HostIndex([host(spec('a', 2000))]);
    const c = index.classes[0]!;
    expect(ranked(index, 3)).toEqual([]);
    recordInfeasible(c, bucketDemand(role, 3, false), 'on');
    expect(knownInfeasible(c, bucketDemand(role, 4, false), 'on')).toBe(true);
    expect(knownInfeasible(c, bucketDemand(role, 2, false), 'on')).toBe(false);
  });

  test('the memo of failures is fed only in mode on, and read in every mode but off', () => {
    // 2000 of 8000 CPU free: 3 members fail now, though an empty host would take them
    const index = new HostIndex([host(spec('a', 8000), 6000)]);
    const c = index.classes[0]!;
    expect(ranked(index, 3)).toEqual([]);
    recordInfeasible(c, bucketDemand(role, 3, false), 'read');
    expect(knownInfeasible(c, bucketDemand(role, 4, false), 'on')).toBe(false);
    recordInfeasible(c, bucketDemand(role, 3, false), 'on');
    expect(knownInfeasible(c, bucketDemand(role, 4, false), 'read')).toBe(true);
    expect(knownInfeasible(c, bucketDemand(role, 4, false), 'off')).toBe(false);
  });
});
