import { describe, expect, test } from 'vitest';
import type { NodeSpec, PlacementSpec, RoleSpec, TopologySpec } from '../contract/types.ts';
import { allocateGang } from './allocateGang.ts';
import { gangShape } from './gangShape.ts';
import { HostCounter } from './hostCounter.ts';
import { HostIndex } from './hostIndex.ts';
import { compareDomainValues, topologyGroups, topologyRoom } from './topologyDomains.ts';

function spec(id: string, rack: string | number | null, slots: number): NodeSpec {
  return { id, labels: rack === null ? {} : { rack }, capacity: { cpu: 64000, memoryMb: 65536, slots }, gpus: [] };
}

// a plain job's request (what gangShape reads), typed by its parts only
function gang(count: number, topology?: TopologySpec) {
  const roles: RoleSpec[] = [{ name: 'task', count, resources: { cpu: 1000, memoryMb: 0, gpus: 0, gpuMemoryMb: 0 } }];
  const placement: PlacementSpec = { policy: 'pack', gpuLocality: false, ...(topology === undefined ? {} : { topology }) };
  return { id: 'j', identity: { user: 'u', queue: 'q', project: 'p' }, priority: 0, select: '', minInstances: 0, roles, placement };
}

describe('topology domains', () => {
  test('values order as numbers when both are, else by text; numbers first', () => {
    const values = ['r9', '10', 'r10', '9', 'a', '-1', '2.5', ''];
    expect([...values].sort(compareDomainValues)).toEqual(['-1', '2.5', '9', '10', '', 'a', 'r10', 'r9']);
  });

  test('classes group by the label value as text; hosts without it (or with an inherited name) are apart', () => {
    const index = new HostIndex([
      { spec: spec('a', 'r2', 4), usedCpu: 0, usedMemoryMb: 0, usedSlots: 0, gpusUsed: [] },
      { spec: spec('b', 1, 4), usedCpu: 0, usedMemoryMb: 0, usedSlots: 0, gpusUsed: [] },
      { spec: spec('c', '1', 8), usedCpu: 0, usedMemoryMb: 0, usedSlots: 0, gpusUsed: [] },
      { spec: spec('d', null, 4), usedCpu: 0, usedMemoryMb: 0, usedSlots: 0, gpusUsed: [] },
    ]);
    const groups = topologyGroups(index, index.classes, 'rack');
    expect(groups.domains.map((d) => [d.value, d.hosts])).toEqual([['1', 2], ['r2', 1]]);
    expect(groups.unlabelled.flatMap((c) => c.hosts.map((h) => index.ids[h]))).toEqual(['d']);
    expect(topologyGroups(index, index.classes, 'toString').domains).toEqual([]);
  });

  test('topologyRoom: per domain, the hosts that could take one member now, and a message with the most room first', () => {
    const sources = [spec('a1', 'r1', 4), spec('b1', 'r1', 4), spec('a2', 'r2', 4), spec('b2', 'r2', 4), spec('u', null, 4)]
      .map((s, i) => ({ spec: s, usedCpu: 0, usedMemoryMb: 0, usedSlots: i === 0 || i === 1 || i === 2 ? 4 : 0, gpusUsed: [] }));
    const index = new HostIndex(sources);
    const shape = gangShape(gang(6, { key: 'rack', mode: 'required' }));
    const room = topologyRoom(index, index.classes, shape, new HostCounter(index, { lost: 0, drained: 0 }))!;
    expect(room).toEqual({
      key: 'rack',
      domains: [{ value: 'r1', hosts: 2, fit: 0 }, { value: 'r2', hosts: 2, fit: 1 }],
      unlabelled: 1,
      message: "rack r2: 1 of 2 hosts could take a 'task' member; rack r1: 0 of 2; 1 matching host without label rack (not candidates)",
    });
    expect(topologyRoom(index, index.classes, gangShape(gang(6)))).toBeNull();
    expect(topologyRoom(index, index.classes, gangShape(gang(6, { key: 'rack', mode: 'preferred' })))).toBeNull();
  });

  test('the message lists at most eight domains and sums up the rest', () => {
    const sources = Array.from({ length: 12 }, (_, i) => ({ spec: spec(`h${i}`, `r${String(i).padStart(2, '0')}`, 2), usedCpu: 0, usedMemoryMb: 0, usedSlots: i < 4 ? 2 : 0, gpusUsed: [] }));
    const index = new HostIndex(sources);
    const room = topologyRoom(index, index.classes, gangShape(gang(4, { key: 'rack', mode: 'required' })))!;
    expect(room.domains).toHaveLength(12);
    expect(room.message).toBe("rack r04: 1 of 1 hosts could take a 'task' member; rack r05: 1 of 1; rack r06: 1 of 1; rack r07: 1 of 1; rack r08: 1 of 1; "
      + 'rack r09: 1 of 1; rack r10: 1 of 1; rack r11: 1 of 1; 4 more rack domains with at most 0 each');
  });

  test('a failed required attempt leaves the index exactly as it was', () => {
    const sources = [spec('a1', 'r1', 4), spec('b1', 'r1', 4), spec('a2', 'r2', 4), spec('b2', 'r2', 3)]
      .map((s) => ({ spec: s, usedCpu: 0, usedMemoryMb: 0, usedSlots: 0, gpusUsed: [] }));
    const index = new HostIndex(sources);
    const before = [...index.freeSlots];
    const sums = [...index.classFree()];
    expect(allocateGang(index, 'j', gangShape(gang(9, { key: 'rack', mode: 'required' })), index.classes)).toBeNull();
    expect([...index.freeSlots]).toEqual(before);
    expect([...index.classFree()]).toEqual(sums);
    // 7 fit both racks on their second plan (4 + 3): the tie goes to r1, and its class's sums are debited
    const stmt = allocateGang(index, 'j', gangShape(gang(7, { key: 'rack', mode: 'required' })), index.classes)!;
    expect(stmt.held.map((d) => index.ids[d.host])).toEqual(['a1', 'b1']);
    expect(index.classFree()[4 * index.cls[0]! + 2]).toBe(1);
    stmt.discard();
    expect([...index.classFree()]).toEqual(sums);
  });
});
