import { describe, expect, test } from 'vitest';
import type { NodeSpec, PlacementSpec, RoleSpec } from '../contract/types.ts';
import { fitsEmptyCluster } from './fitsEmptyCluster.ts';
import { gangShape } from './gangShape.ts';
import { HostIndex } from './hostIndex.ts';

// four-slot hosts, one rack each: a rack label splits one kind of host into a class per rack
function rackedHost(i: number): { spec: NodeSpec; usedCpu: number; usedMemoryMb: number; usedSlots: number; gpusUsed: number[] } {
  return { spec: { id: `h${i}`, labels: { rack: `r${i}` }, capacity: { cpu: 64000, memoryMb: 65536, slots: 4 }, gpus: [] }, usedCpu: 0, usedMemoryMb: 0, usedSlots: 4, gpusUsed: [] };
}

function gang(count: number, placement: Partial<PlacementSpec>) {
  const roles: RoleSpec[] = [{ name: 'task', count, resources: { cpu: 1000, memoryMb: 0, gpus: 0, gpuMemoryMb: 0 } }];
  return gangShape({ select: '', roles, placement: { policy: 'pack', gpuLocality: false, ...placement } });
}

describe('fitsEmptyCluster', () => {
  test('hosts of one kind in classes of their own (a rack each) count together, with every host busy now', () => {
    const index = new HostIndex([0, 1, 2, 3].map(rackedHost));
    expect(index.classes).toHaveLength(4);
    const preferred = { topology: { key: 'rack', mode: 'preferred' as const } };
    // 16 slots when empty: 8 members pack on two hosts, 16 on four, 17 on none
    expect(fitsEmptyCluster(index, gang(8, {}), index.classes)).toBe(true);
    expect(fitsEmptyCluster(index, gang(16, preferred), index.classes)).toBe(true);
    expect(fitsEmptyCluster(index, gang(17, preferred), index.classes)).toBe(false);
    // spread: one member per host
    expect(fitsEmptyCluster(index, gang(4, { policy: 'spread' }), index.classes)).toBe(true);
    expect(fitsEmptyCluster(index, gang(5, { policy: 'spread' }), index.classes)).toBe(false);
    // a required topology: one rack alone, four slots
    expect(fitsEmptyCluster(index, gang(4, { topology: { key: 'rack', mode: 'required' } }), index.classes)).toBe(true);
    expect(fitsEmptyCluster(index, gang(5, { topology: { key: 'rack', mode: 'required' } }), index.classes)).toBe(false);
  });
});
