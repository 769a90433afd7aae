import { describe, expect, test } from 'vitest';
import { explain, shardGet } from '@muster/core';
import type { GangCommitted, GangReserved, SchedulerEvent, State } from '@muster/core';
import { job, node, slotNode } from '@muster/core/testing';
import type { JobOptions, NodeOptions } from '@muster/core/testing';
import { given, placement, policy, register, schedule, submit } from '@muster/core/testing';
import type { Outcome, Step } from '@muster/core/testing';
import { invariantViolations } from '@muster/core/testing';

// DESIGN.md §13, contract v1.1: placement.topology {key, mode}, through the real ingest and session.

type Mode = 'required' | 'preferred';

/** A job fixture with a topology on the label `key`. */
function topoJob(id: string, mode: Mode, o: JobOptions = {}, key = 'rack'): Record<string, unknown> {
  const body = job(id, o);
  return { ...body, placement: { ...(body.placement as Record<string, unknown>), topology: { key, mode } } };
}

/** A slot-limited host in a rack (no label when rack is null). */
function rackNode(id: string, rack: string | number | null, slots: number, o: NodeOptions = {}): Record<string, unknown> {
  return slotNode(id, slots, { ...o, labels: rack === null ? {} : { rack } });
}

/** The rack label of every node a commit uses, distinct, sorted. */
function racksOf(state: State, commit: GangCommitted): string[] {
  const racks = new Set(commit.allocations.map((a) => String(shardGet(state.nodes, a.node)!.spec.labels.rack ?? `(none:${a.node})`)));
  return [...racks].sort();
}

function membersOf(commit: GangCommitted): number {
  return commit.allocations.reduce((n, a) => n + a.members.length, 0);
}

function clean(o: Outcome): void {
  expect(invariantViolations(o.state)).toEqual([]);
}

// Three racks of four 4-slot hosts; ids interleave the racks (a1 r1, a2 r2, a3 r3, b1 r1, ...), so
// that placement by node id alone would cross racks.
function threeRacks(slots = 4): Step[] {
  const steps: Step[] = [];
  for (const row of ['a', 'b', 'c', 'd']) for (const r of [1, 2, 3]) steps.push(register(rackNode(`${row}${r}`, `r${r}`, slots)));
  return steps;
}

const busy = (id: string, tasks: number, select: string): Step => submit(job(id, { tasks, select, user: 'other' }));

describe('required topology', () => {
  test('a 16-member gang lands within one rack, where without topology it would cross racks', () => {
    // r1 has 2 slots taken on a1; r2 and r3 are free: pack's 4 x 4 plan would take a1? no: b1, c1, d1, a2 by id
    const setup = [...threeRacks(), busy('x', 2, "rack == 'r1'"), schedule()];
    given(setup).when(submit(job('plain', { tasks: 16 }))).when(schedule()).then((o) => {
      expect(racksOf(o.state, o.commits[0]!).length).toBeGreaterThan(1);
    });
    given(setup).when(submit(topoJob('g', 'required', { tasks: 16 }))).when(schedule()).then((o) => {
      const c = o.commits[0]!;
      expect(membersOf(c)).toBe(16);
      // r1 has only 14 free slots; r2 is the first rack (by value) that takes it on its first plan
      expect(racksOf(o.state, c)).toEqual(['r2']);
      expect(placement(c)).toEqual({ a2: 4, b2: 4, c2: 4, d2: 4 });
      clean(o);
    });
  });

  test('it waits when no rack has room, though the cluster has, and explain names the racks and their free hosts', () => {
    // 10 free slots in each rack: 30 in all, 16 in none
    const setup = [...threeRacks(), busy('x1', 6, "rack == 'r1'"), busy('x2', 6, "rack == 'r2'"), busy('x3', 6, "rack == 'r3'"), schedule()];
    given(setup).when(submit(job('plain', { tasks: 16, }))).when(schedule()).then((o) => {
      expect(o.commits).toHaveLength(1);
    });
    given(setup).when(submit(topoJob('g', 'required', { tasks: 16 }))).when(schedule()).then((o) => {
      expect(o.commits).toHaveLength(0);
      expect(o.events.filter((e) => e.type === 'HostDebited')).toHaveLength(0);
      expect(o.aborts[0]!.reason.category).toBe('insufficient-resources');
      // the decision itself names the topology and the room in each rack
      expect(o.aborts[0]!.reason.message).toContain('(pack, topology rack required)');
      expect(o.aborts[0]!.reason.message).toContain('all in one rack: rack r1: 4 of 4 hosts could take');
      const e = explain(o.state, 'g')!;
      expect(e.topology).toEqual({
        key: 'rack',
        unlabelled: 0,
        domains: [{ value: 'r1', hosts: 4, fit: 4 }, { value: 'r2', hosts: 4, fit: 4 }, { value: 'r3', hosts: 4, fit: 4 }],
      });
      expect(e.text).toContain('all in one rack: rack r1: 4 of 4 hosts could take a \'task\' member; rack r2: 4 of 4; rack r3: 4 of 4');
      clean(o);
    });
  });

  test('explain counts full hosts per rack', () => {
    given([...threeRacks(), busy('x1', 16, "rack == 'r1'"), busy('x2', 15, "rack == 'r2'"), busy('x3', 8, "rack == 'r3'"), schedule()])
      .when(submit(topoJob('g', 'required', { tasks: 16 }))).when(schedule()).then((o) => {
        expect(o.commits).toHaveLength(0);
        // the racks with the most room first
        expect(explain(o.state, 'g')!.text).toContain("all in one rack: rack r3: 2 of 4 hosts could take a 'task' member; rack r2: 1 of 4; rack r1: 0 of 4");
      });
  });

  test('no rack could ever hold it: placement-unsatisfiable, though the cluster as a whole could', () => {
    given([...threeRacks(2)]).when(submit(topoJob('g', 'required', { tasks: 16 }))).when(schedule()).then((o) => {
      expect(o.commits).toHaveLength(0);
      expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
    });
    // the same with two roles (the allocator on an empty copy decides)
    given([...threeRacks(2)]).when(submit(topoJob('g', 'required', { roles: [{ name: 'a', count: 8 }, { name: 'b', count: 8 }] }))).when(schedule()).then((o) => {
      expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
    });
  });

  test('hosts without the label are not candidates', () => {
    const steps = [register(rackNode('u1', null, 16)), register(rackNode('u2', null, 16)), register(rackNode('r1a', 'r1', 4))];
    given(steps).when(submit(topoJob('g', 'required', { tasks: 8 }))).when(schedule()).then((o) => {
      expect(o.commits).toHaveLength(0);
      expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
      expect(explain(o.state, 'g')!.text).toContain('2 matching hosts without label rack (not candidates)');
    });
    given(steps).when(submit(topoJob('g', 'required', { tasks: 4 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ r1a: 4 });
    });
    given([register(rackNode('u1', null, 16))]).when(submit(topoJob('g', 'required', { tasks: 4 }))).when(schedule()).then((o) => {
      expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
      expect(explain(o.state, 'g')!.text).toContain('no matching host has label rack');
    });
  });

  test('the rack whose best plan ranks first wins: fewer hosts beat a lower label value', () => {
    // r1: four 2-slot hosts (8 members need 4 hosts); r2: two 4-slot hosts (2 hosts)
    const steps = [...['p', 'q', 's', 't'].map((x) => register(rackNode(`${x}1`, 'r1', 2))), register(rackNode('p2', 'r2', 4)), register(rackNode('q2', 'r2', 4))];
    given(steps).when(submit(topoJob('g', 'required', { tasks: 8 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ p2: 4, q2: 4 });
    });
  });

  test('ties go to the lower label value: numbers by number, text by code units', () => {
    // identical racks: every plan ties, so the value decides (9 before 10; "r10" before "r9")
    const numeric = [register(rackNode('h1', 10, 4)), register(rackNode('h2', 9, 4))];
    given(numeric).when(submit(topoJob('g', 'required', { tasks: 4 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ h2: 4 });
    });
    const text = [register(rackNode('h1', 'r9', 4)), register(rackNode('h2', 'r10', 4))];
    given(text).when(submit(topoJob('g', 'required', { tasks: 4 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ h2: 4 });
    });
    // the binpack score would rather take the fuller host of rack r2: the rack's value still decides
    const scored = [register(rackNode('h1', 'r1', 8)), register(rackNode('h2', 'r2', 8)), busy('x', 2, "rack == 'r2'"), schedule()];
    given(scored).when(submit(topoJob('g', 'required', { tasks: 4 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ h1: 4 });
    });
    given(scored).when(submit(job('plain', { tasks: 4 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ h2: 4 });
    });
  });

  test('spread: every member on its own host, all in one rack', () => {
    // r1 has 3 hosts, r2 has 4: a 4-member spread fits only r2
    const steps = [...['a', 'b', 'c'].map((x) => register(rackNode(`${x}1`, 'r1', 4))), ...['a', 'b', 'c', 'd'].map((x) => register(rackNode(`${x}2`, 'r2', 4)))];
    given(steps).when(submit(topoJob('g', 'required', { tasks: 4, policy: 'spread' }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ a2: 1, b2: 1, c2: 1, d2: 1 });
    });
    given(steps).when(submit(topoJob('g', 'required', { tasks: 3, policy: 'spread' }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ a1: 1, b1: 1, c1: 1 });
    });
  });

  test('ptile: buckets of ptile, all in one rack', () => {
    given([...threeRacks(), busy('x', 1, "rack == 'r1'"), schedule()]).when(submit(topoJob('g', 'required', { tasks: 16, ptile: 4 }))).when(schedule()).then((o) => {
      const c = o.commits[0]!;
      expect(racksOf(o.state, c)).toEqual(['r2']);
      expect(Object.values(placement(c))).toEqual([4, 4, 4, 4]);
    });
  });

  test('same-node is trivially within one rack, but still not on a host without the label', () => {
    given([register(rackNode('a', null, 8)), register(rackNode('b', 'r1', 8))]).when(submit(topoJob('g', 'required', { tasks: 4, policy: 'same-node' }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ b: 4 });
    });
  });

  test('gpuLocality: one rack, and each host\'s GPUs of the gang within one NVLink domain', () => {
    // r1: one 8-GPU host (2 domains of 4); r2: two such hosts. 4 members x 2 GPUs, pack, locality.
    const gpuNode = (id: string, rack: string) => node(id, { gpus: 8, domains: 2, cpu: 64_000, labels: { rack } });
    const steps = [register(gpuNode('g1', 'r1')), register(gpuNode('g2', 'r2')), register(gpuNode('g3', 'r2')),
      submit(job('x', { tasks: 3, gpus: 1, user: 'other', select: "rack == 'r1'", })), schedule()];
    given(steps).when(submit(topoJob('g', 'required', { tasks: 4, gpus: 2, gpuLocality: true }))).when(schedule()).then((o) => {
      const c = o.commits[0]!;
      expect(membersOf(c)).toBe(4);
      expect(racksOf(o.state, c)).toEqual(['r2']);
      for (const a of c.allocations) expect(new Set(a.gpuIds.map((g) => (g < 4 ? 0 : 1))).size).toBe(1);
      clean(o);
    });
  });

  test('two roles (pack) share the rack', () => {
    given(threeRacks()).when(submit(topoJob('g', 'required', { roles: [{ name: 'ps', count: 2, cpu: 2000 }, { name: 'w', count: 10 }] }))).when(schedule()).then((o) => {
      expect(membersOf(o.commits[0]!)).toBe(12);
      expect(racksOf(o.state, o.commits[0]!)).toHaveLength(1);
    });
  });

  test('a second identical job in the session is pended from the cache; a job without topology is not', () => {
    given([...threeRacks(2)]).when(submit(topoJob('g1', 'required', { tasks: 16 }))).when(submit(topoJob('g2', 'required', { tasks: 16 }))).when(submit(job('g3', { tasks: 16 })))
      .when(schedule()).then((o) => {
        expect(o.aborts.map((a) => [a.jobId, a.reason.cached === true])).toEqual([['g1', false], ['g2', true]]);
        expect(o.commits.map((c) => c.jobId)).toEqual(['g3']);
      });
  });

  test('a reservation of a required-topology gang holds hosts of one rack', () => {
    // one host of each rack busy: r1 until 20 s, r2 until 10 s, r3 (two hosts, too small anyway) until 5 s
    const steps: Step[] = [
      policy({ reserveDepth: 1 }),
      ...['a', 'b', 'c', 'd'].map((x) => register(rackNode(`${x}1`, 'r1', 4))),
      ...['a', 'b', 'c', 'd'].map((x) => register(rackNode(`${x}2`, 'r2', 4))),
      ...['a', 'b'].map((x) => register(rackNode(`${x}3`, 'r3', 4))),
      submit({ ...job('long', { tasks: 4, user: 'other', select: "rack == 'r1'" }), runtimeLimitMs: 20_000 }),
      submit({ ...job('short', { tasks: 4, user: 'other', select: "rack == 'r2'" }), runtimeLimitMs: 10_000 }),
      submit({ ...job('tiny', { tasks: 8, user: 'other', select: "rack == 'r3'" }), runtimeLimitMs: 5_000 }),
      schedule(),
    ];
    given(steps).when(submit({ ...topoJob('g', 'required', { tasks: 16, user: 'big' }), runtimeLimitMs: 60_000 })).when(schedule()).then((o) => {
      const reserved = o.events.filter((e): e is GangReserved => e.type === 'GangReserved');
      // r3 (two hosts) frees first but can never hold it; r2 frees at 10 s, before r1
      expect(reserved).toEqual([expect.objectContaining({ jobId: 'g', startAt: 10_000, hosts: ['a2', 'b2', 'c2', 'd2'] })]);
    });
    // without topology it fits now, across racks
    given(steps).when(submit({ ...job('g', { tasks: 16, user: 'big' }), runtimeLimitMs: 60_000 })).when(schedule()).then((o) => {
      expect(racksOf(o.state, o.commits[0]!)).toEqual(['r1', 'r2']);
    });
  });
});

describe('preferred topology', () => {
  test('fits in one rack when one rack can take it', () => {
    const setup = [...threeRacks(), busy('x', 2, "rack == 'r1'"), schedule()];
    given(setup).when(submit(topoJob('g', 'preferred', { tasks: 16 }))).when(schedule()).then((o) => {
      expect(racksOf(o.state, o.commits[0]!)).toEqual(['r2']);
    });
  });

  test('spans the fewest racks when none can take it alone', () => {
    // 2-slot hosts, ids interleaved: r1 has 5 hosts (10 slots), r2 3 (6), r3 4 (8); 16 members
    const steps: Step[] = [];
    const racks: [string, number][] = [['r1', 5], ['r2', 3], ['r3', 4]];
    for (let row = 0; row < 5; row++) for (const [r, n] of racks) if (row < n) steps.push(register(rackNode(`h${row}${r}`, r, 2)));
    given(steps).when(submit(job('plain', { tasks: 16 }))).when(schedule()).then((o) => {
      expect(racksOf(o.state, o.commits[0]!)).toEqual(['r1', 'r2', 'r3']);
    });
    given(steps).when(submit(topoJob('g', 'preferred', { tasks: 16 }))).when(schedule()).then((o) => {
      expect(membersOf(o.commits[0]!)).toBe(16);
      expect(racksOf(o.state, o.commits[0]!)).toEqual(['r1', 'r3']);
      clean(o);
    });
    // required waits instead
    given(steps).when(submit(topoJob('g', 'required', { tasks: 16 }))).when(schedule()).then((o) => {
      expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
    });
  });

  test('hosts without the label are candidates, each a domain of its own', () => {
    // one big unlabelled host takes the whole gang: one domain, before two racks
    const steps = [...['a', 'b'].map((x) => register(rackNode(`${x}1`, 'r1', 4))), ...['a', 'b'].map((x) => register(rackNode(`${x}2`, 'r2', 4))), register(rackNode('z', null, 16))];
    given(steps).when(submit(topoJob('g', 'preferred', { tasks: 12 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ z: 12 });
    });
    // a rack that takes the gang on its first plan ties with it, and the labelled domain wins
    given([register(rackNode('a1', 'r1', 8)), register(rackNode('z', null, 8))]).when(submit(topoJob('g', 'preferred', { tasks: 8 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ a1: 8 });
    });
    // only unlabelled hosts, several of them: placed as without topology
    given([register(rackNode('u1', null, 2)), register(rackNode('u2', null, 2))]).when(submit(topoJob('g', 'preferred', { tasks: 4 }))).when(schedule()).then((o) => {
      expect(placement(o.commits[0]!)).toEqual({ u1: 2, u2: 2 });
    });
  });

  test('never keeps out a gang that fits without it', () => {
    // 12 members over 6 racks of one 2-slot host each: every rack is needed
    const steps = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((r) => register(rackNode(`h${r}`, r, 2)));
    given(steps).when(submit(topoJob('g', 'preferred', { tasks: 12 }))).when(schedule()).then((o) => {
      expect(membersOf(o.commits[0]!)).toBe(12);
    });
    given(steps).when(submit(topoJob('g', 'preferred', { tasks: 13 }))).when(schedule()).then((o) => {
      expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
    });
  });
});

describe('jobs without topology', () => {
  test('place exactly as before on labelled racks (the same events as a cluster without the label)', () => {
    const run = (labelled: boolean): SchedulerEvent[] => {
      const steps: Step[] = [];
      for (const row of ['a', 'b', 'c', 'd']) for (const r of [1, 2, 3]) steps.push(register(slotNode(`${row}${r}`, 4, labelled ? { labels: { rack: `r${r}` } } : {})));
      return given(steps).when(submit(job('g', { tasks: 16 }))).when(schedule()).events;
    };
    expect(run(true)).toEqual(run(false));
  });
});
