import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { NodeSpec, PlacementSpec, RoleSpec } from '../contract/types.ts';
import { allocateGang } from './allocateGang.ts';
import { gangShape } from './gangShape.ts';
import type { GangShape } from './gangShape.ts';
import type { HostSource } from './hostClass.ts';
import { HostIndex } from './hostIndex.ts';
import type { Statement } from './statement.ts';
import { topologyGroups } from './topologyDomains.ts';

// DESIGN.md §13, `required`: the domain whose placement's plans rank first wins, ties to the
// earlier domain. The allocator skips domains and plans by a bound; this compares what it picks
// with the rule read literally: every domain placed on its own without topology, the plan rank of
// each role under pack read off its hosts (plan h - 1 uses h hosts), the least ranks, the earliest.

const RACKS = ['r1', 'r2', 'r3'];

interface HostArb {
  rack: number;
  cpu: number;
  slots: number;
  gpus: number;
  usedCpu: number;
  usedSlots: number;
  usedGpus: number;
}

const hostArb: fc.Arbitrary<HostArb> = fc.record({
  rack: fc.integer({ min: 0, max: RACKS.length - 1 }),
  // few kinds of host, so that a rack has hosts of one class used differently (a class's tree
  // maxima then come from different hosts: the bound is loose, as on a real busy cluster)
  cpu: fc.constantFrom(8000, 16000),
  slots: fc.constantFrom(4, 8),
  gpus: fc.constantFrom(0, 0, 4),
  usedCpu: fc.integer({ min: 0, max: 3 }),
  usedSlots: fc.integer({ min: 0, max: 4 }),
  usedGpus: fc.integer({ min: 0, max: 8 }),
});

interface GangArb {
  counts: number[];
  cpu: number[];
  gpus: number[];
  policy: 'pack' | 'spread' | 'same-node';
  ptile: number | undefined;
  gpuLocality: boolean;
}

const gangArb: fc.Arbitrary<GangArb> = fc.record({
  counts: fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 2 }),
  cpu: fc.array(fc.constantFrom(0, 1000, 2000, 3000), { minLength: 2, maxLength: 2 }),
  gpus: fc.array(fc.constantFrom(0, 0, 0, 1, 2), { minLength: 2, maxLength: 2 }),
  policy: fc.constantFrom<'pack' | 'spread' | 'same-node'>('pack', 'pack', 'pack', 'pack', 'pack', 'pack', 'spread', 'same-node'),
  ptile: fc.constantFrom<number | undefined>(undefined, undefined, undefined, undefined, 1, 2, 4),
  gpuLocality: fc.boolean(),
});

function sources(hosts: readonly HostArb[]): HostSource[] {
  return hosts.map((h, i): HostSource => {
    const spec: NodeSpec = {
      id: `h${String(i).padStart(2, '0')}`,
      labels: { rack: RACKS[h.rack]! },
      capacity: { cpu: h.cpu, memoryMb: 65536, slots: h.slots },
      gpus: Array.from({ length: h.gpus }, (_, g) => ({ id: g, memoryMb: 81920, model: 'A100', nvlinkDomain: g < h.gpus / 2 ? 0 : 1 })),
    };
    const used = Math.min(h.usedGpus, h.gpus);
    return { spec, usedCpu: (h.cpu * h.usedCpu) / 4, usedMemoryMb: 0, usedSlots: Math.min(h.usedSlots, h.slots), gpusUsed: Array.from({ length: used }, (_, g) => g) };
  });
}

function shapeOf(g: GangArb, topology: boolean): GangShape {
  const roles: RoleSpec[] = g.counts.map((count, i) => ({ name: `r${i}`, count, resources: { cpu: g.cpu[i]!, memoryMb: 0, gpus: g.gpus[i]!, gpuMemoryMb: 0 } }));
  const placement: PlacementSpec = {
    policy: g.policy,
    gpuLocality: g.gpuLocality,
    ...(g.policy === 'pack' && g.ptile !== undefined ? { ptile: g.ptile } : {}),
    ...(topology ? { topology: { key: 'rack', mode: 'required' as const } } : {}),
  };
  return gangShape({ select: '', roles, placement });
}

/** What a statement holds, comparable: host, role and members per debit, in order. */
function held(index: HostIndex, stmt: Statement | null): string[] | null {
  return stmt === null ? null : stmt.held.map((d) => `${d.event.node}:${d.event.role}:${d.event.members.join(",")}:${d.event.gpuIds.join(",")}`);
}

/** Plan ranks per role in placement order: under pack without ptile, hosts used minus one; otherwise 0. */
function ranksOf(shape: GangShape, stmt: Statement): number[] {
  const packed = shape.placement.policy === 'pack' && shape.placement.ptile === undefined;
  return shape.roles.map((r) => (packed ? new Set(stmt.held.filter((d) => d.event.role === r.name).map((d) => d.host)).size - 1 : 0));
}

function before(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/** The rule read literally: each domain placed alone, without topology; least ranks win, the earliest on a tie. */
function literal(index: HostIndex, g: GangArb): string[] | null {
  const plain = shapeOf(g, false);
  let best: { ranks: number[]; held: string[] } | null = null;
  for (const d of topologyGroups(index, index.classes, 'rack').domains) {
    const stmt = allocateGang(index, 'j', plain, d.classes);
    if (stmt === null) continue;
    const ranks = ranksOf(plain, stmt);
    if (best === null || before(ranks, best.ranks)) best = { ranks, held: held(index, stmt)! };
    stmt.discard();
  }
  return best?.held ?? null;
}

describe('required topology picks the domain the rule names', () => {
  test('the same placement as every domain tried on its own, least plan ranks, earliest on a tie', () => {
    fc.assert(
      fc.property(fc.array(hostArb, { minLength: 6, maxLength: 30 }), gangArb, (hosts, g) => {
        const index = new HostIndex(sources(hosts));
        const expected = literal(index, g);
        const stmt = allocateGang(index, 'j', shapeOf(g, true), index.classes);
        expect(held(index, stmt)).toEqual(expected);
        stmt?.discard();
        // all or nothing: what was tried is given back
        expect(literal(index, g)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  test('a tie goes to the earlier rack even when a later rack is tried first (its bound is looser)', () => {
    const cls = (id: string, rack: string): NodeSpec => ({ id, labels: { rack }, capacity: { cpu: 8000, memoryMb: 65536, slots: 8 }, gpus: [] });
    const used = (spec: NodeSpec, cpu: number, slots: number): HostSource => ({ spec, usedCpu: cpu, usedMemoryMb: 0, usedSlots: slots, gpusUsed: [] });
    const index = new HostIndex([
      // r1: two hosts with room for exactly 2 members each: the bound says 2 hosts (plan 1)
      used(cls('a1', 'r1'), 6000, 0), used(cls('b1', 'r1'), 6000, 0),
      // r2: one host with the CPU for 8 but 2 slots, one with 8 slots but the CPU for 2: the bound
      // (per dimension, over the class) says one host could take all 4 (plan 0); it takes plan 1 too
      used(cls('a2', 'r2'), 0, 6), used(cls('b2', 'r2'), 6000, 0),
    ]);
    const g: GangArb = { counts: [4], cpu: [1000, 0], gpus: [0, 0], policy: 'pack', ptile: undefined, gpuLocality: false };
    const expected = literal(index, g);
    const stmt = allocateGang(index, 'j', shapeOf(g, true), index.classes);
    expect(held(index, stmt)?.map((d) => d.split(':')[0])).toEqual(['a1', 'b1']);
    expect(held(index, stmt)).toEqual(expected);
  });
});
