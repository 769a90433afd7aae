import { describe, expect, test } from 'vitest';
import type { GangAborted, HostDebited, SchedulerEvent } from '@muster/core';
import { runSession } from '@muster/core';
import { shardGet } from '@muster/core';
import type { State } from '@muster/core';
import { job, node, slotNode } from '@muster/core/testing';
import { given, placement, register, schedule, submit } from '@muster/core/testing';
import type { Outcome } from '@muster/core/testing';
import { invariantViolations } from '@muster/core/testing';

// The behaviours of ../shared/reference (co-placement, plan ordering, debit and reversal), each
// through the real ingest and session code.

function nodeUse(state: State, id: string): { slots: number; cpu: number; gpus: number[] } {
  const n = shardGet(state.nodes, id)!;
  return { slots: n.used.slots, cpu: n.used.cpu, gpus: n.gpusUsed };
}

function written(o: Outcome, type: SchedulerEvent['type']): number {
  return o.events.filter((e) => e.type === type).length;
}

function clean(o: Outcome): void {
  expect(invariantViolations(o.state)).toEqual([]);
}

// A world (CPU) plus two GPU agents: the reference's "cell".
const cell = (id: string, policy: 'pack' | 'spread' | 'same-node', gpuLocality = false): Record<string, unknown> => job(id, {
  policy,
  gpuLocality,
  roles: [
    { name: 'world', count: 1, cpu: 1000, memoryMb: 2048 },
    { name: 'agent', count: 2, cpu: 200, memoryMb: 256, gpus: 1, gpuMemoryMb: 4096 },
  ],
});

describe('co-placement', () => {
  test('a gang that fits on one node is placed there, with its GPU devices', () => {
    given([register(node('n1', { gpus: 2, gpuMemoryMb: 8192 })), submit(cell('c1', 'same-node'))])
      .when(schedule())
      .then((o) => {
        expect(o.commits).toHaveLength(1);
        expect(placement(o.commits[0]!)).toEqual({ n1: 3 });
        expect(nodeUse(o.state, 'n1')).toEqual({ slots: 3, cpu: 1400, gpus: [0, 1] });
        const agent = o.commits[0]!.allocations.find((a) => a.role === 'agent')!;
        expect(agent).toEqual({ node: 'n1', role: 'agent', members: [1, 2], gpuIds: [0, 1], resources: { cpu: 400, memoryMb: 512, gpus: 2 } });
        clean(o);
      });
  });

  test('a gang that cannot fit reserves nothing', () => {
    given([register(node('n1', { gpus: 1, gpuMemoryMb: 8192 })), submit(cell('c1', 'same-node'))])
      .when(schedule())
      .then((o) => {
        expect(o.commits).toHaveLength(0);
        expect(written(o, 'HostDebited')).toBe(0);
        expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
        expect(nodeUse(o.state, 'n1')).toEqual({ slots: 0, cpu: 0, gpus: [] });
        clean(o);
      });
  });

  test('a same-node gang never splits across two partial nodes', () => {
    given([register(node('n1', { gpus: 1 })), register(node('n2', { gpus: 1 })), submit(cell('c1', 'same-node'))])
      .when(schedule())
      .then((o) => {
        expect(o.commits).toHaveLength(0);
        expect(o.aborts[0]!.reason).toMatchObject({ category: 'placement-unsatisfiable' });
        expect(nodeUse(o.state, 'n1').gpus).toEqual([]);
        expect(nodeUse(o.state, 'n2').gpus).toEqual([]);
        clean(o);
      });
  });

  test('same-node with gpuLocality keeps every GPU of the gang in one NVLink domain', () => {
    // 4 + 4 devices; devices 0 and 4 taken first, so no domain has... then 3 free in each domain
    given([
      register(node('n1', { gpus: 8, domains: 2, cpu: 64000 })),
      submit(job('warm', { roles: [{ name: 'a', count: 1, gpus: 1 }, { name: 'b', count: 1, gpus: 1 }], policy: 'spread' })),
      register(node('n2', { gpus: 8, domains: 2, cpu: 64000 })),
    ])
      .when(schedule())
      .when(submit(job('loc', { tasks: 4, gpus: 1, policy: 'same-node', gpuLocality: true })))
      .when(schedule())
      .then((o) => {
        const commit = o.commits[0]!;
        const ids = commit.allocations.flatMap((a) => a.gpuIds);
        expect(ids).toHaveLength(4);
        // all four ids in one domain (0-3 or 4-7)
        expect(new Set(ids.map((g) => Math.floor(g / 4))).size).toBe(1);
        clean(o);
      });
  });

  test('spread places every member on a distinct node', () => {
    given([register(node('n1')), register(node('n2')), register(node('n3')), submit(job('s1', { tasks: 3, cpu: 500, memoryMb: 512, policy: 'spread' }))])
      .when(schedule())
      .then((o) => {
        expect(placement(o.commits[0]!)).toEqual({ n1: 1, n2: 1, n3: 1 });
        clean(o);
      });
  });

  test('spread fails with too few nodes and reserves nothing', () => {
    given([register(node('n1')), submit(job('s1', { tasks: 2, cpu: 500, memoryMb: 512, policy: 'spread' }))])
      .when(schedule())
      .then((o) => {
        expect(o.commits).toHaveLength(0);
        expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
        expect(nodeUse(o.state, 'n1')).toEqual({ slots: 0, cpu: 0, gpus: [] });
        clean(o);
      });
  });

  test('a spread rollback frees the GPU devices it had taken', () => {
    // the world and one agent find hosts, the second agent does not: the attempt is discarded,
    // and a later gang in the same session gets both devices (they were given back exactly)
    given([register(node('n1', { gpus: 1, gpuMemoryMb: 8192 })), register(node('n2', { gpus: 1, gpuMemoryMb: 8192 })), submit(cell('c1', 'spread'))])
      .when(submit(job('two', { tasks: 2, cpu: 200, memoryMb: 256, gpus: 1, policy: 'spread' })))
      .when(schedule())
      .then((o) => {
        const abort = o.aborts.find((a) => a.jobId === 'c1')!;
        expect(abort.reason.category).toBe('placement-unsatisfiable');
        expect(o.events.filter((e) => e.type === 'HostDebited' && e.jobId === 'c1')).toHaveLength(0);
        const two = o.commits.find((c) => c.jobId === 'two')!;
        expect(two.allocations.map((a) => [a.node, a.gpuIds])).toEqual([['n1', [0]], ['n2', [0]]]);
        clean(o);
      });
  });
});

describe('plans, debits and reversals', () => {
  test('7 members over hosts with 3, 2 and 2 free slots is placed 3, 2, 2', () => {
    given([register(slotNode('n1', 3)), register(slotNode('n2', 2)), register(slotNode('n3', 2)), submit(job('j', { tasks: 7 }))])
      .when(schedule())
      .then((o) => {
        const commit = o.commits[0]!;
        expect(commit.allocations.map((a) => [a.node, a.members])).toEqual([['n1', [0, 1, 2]], ['n2', [3, 4]], ['n3', [5, 6]]]);
        clean(o);
      });
  });

  test('a host too small for one bucket still takes a later, smaller bucket', () => {
    // ptile 4 over hosts of 2 and 4 slots: `small` ranks first (tightest) but cannot take 4;
    // it takes the remainder bucket of 2
    given([register(slotNode('a-small', 2)), register(slotNode('b-big', 4)), submit(job('j', { tasks: 6, ptile: 4 }))])
      .when(schedule())
      .then((o) => {
        expect(o.commits[0]!.allocations.map((a) => [a.node, a.members.length])).toEqual([['b-big', 4], ['a-small', 2]]);
        clean(o);
      });
  });

  test('a mid-plan failure reverses earlier debits before the next plan', () => {
    // plan (4,3): 4 on A, then no host takes 3 → A is given back; plan (3,2,2) succeeds
    given([register(slotNode('A', 4)), register(slotNode('B', 2)), register(slotNode('C', 2)), submit(job('j', { tasks: 7, cpu: 100 }))])
      .when(schedule())
      .then((o) => {
        const steps = o.events
          .filter((e): e is HostDebited => e.type === 'HostDebited' || e.type === 'DebitReversed')
          .map((e) => `${e.type === 'HostDebited' ? '+' : '-'}${e.node}:${e.members.join(',')}`);
        expect(steps).toEqual(['+A:0,1,2,3', '-A:0,1,2,3', '+A:0,1,2', '+B:3,4', '+C:5,6']);
        const reversed = o.events.find((e) => e.type === 'DebitReversed')!;
        const first = o.events.find((e) => e.type === 'HostDebited')!;
        expect({ ...reversed, type: 'HostDebited' }).toEqual(first);
        expect(nodeUse(o.state, 'A')).toMatchObject({ slots: 3, cpu: 300 });
        clean(o);
      });
  });

  test('a gang of 7 on 6 free slots holds nothing, kept warm or not', () => {
    for (const minInstances of [0, 7]) {
      given([register(slotNode('n1', 2)), register(slotNode('n2', 2)), register(slotNode('n3', 2)), submit(job('j', { tasks: 7, minInstances }))])
        .when(schedule())
        .then((o) => {
          expect(o.commits).toHaveLength(0);
          expect(written(o, 'HostDebited')).toBe(0);
          expect(o.aborts[0]!.reason.category).toBe('placement-unsatisfiable');
          for (const n of ['n1', 'n2', 'n3']) expect(nodeUse(o.state, n).slots).toBe(0);
          clean(o);
        });
    }
  });

  test('two competing gangs never both hold a partial set', () => {
    given([register(slotNode('n1', 2)), register(slotNode('n2', 2)), register(slotNode('n3', 2)), submit(job('g1', { tasks: 4 })), submit(job('g2', { tasks: 4 }))])
      .when(schedule())
      .then((o) => {
        expect(o.commits.map((c) => c.jobId)).toEqual(['g1']);
        expect(o.aborts.map((a) => [a.jobId, a.reason.category])).toEqual([['g2', 'insufficient-resources']]);
        const g2 = shardGet(o.state.jobs, 'g2')!;
        expect(g2.members.every((m) => m === null)).toBe(true);
        expect(g2.allocations).toEqual([]);
        clean(o);
      });
  });

  test('pack with gpuLocality takes each host\'s GPUs within one domain (the tightest that fits)', () => {
    given([
      register(node('n1', { gpus: 8, domains: 2, cpu: 64000 })),
      submit(job('a', { tasks: 1, gpus: 2 })),
    ])
      .when(schedule())
      .when(submit(job('b', { tasks: 1, gpus: 3, gpuLocality: true })))
      .when(schedule())
      .then((o) => {
        // domain 0 has 2 free devices (2, 3), domain 1 has 4: 3 devices fit only in domain 1
        expect(o.commits[0]!.allocations[0]!.gpuIds).toEqual([4, 5, 6]);
      })
      .when(submit(job('c', { tasks: 1, gpus: 2, gpuLocality: true })))
      .when(schedule())
      .then((o) => {
        // domain 0 (2 free) and domain 1 (1 free): the tightest domain that fits is 0
        expect(o.commits[0]!.allocations[0]!.gpuIds).toEqual([2, 3]);
        clean(o);
      });
  });

  test('heterogeneous roles: the heaviest role is placed first and pack roles share hosts', () => {
    given([register(node('cpu1', { cpu: 16000 })), register(node('gpu1', { gpus: 4, cpu: 16000 })), submit(job('h', {
      roles: [
        { name: 'driver', count: 1, cpu: 2000, memoryMb: 1024 },
        { name: 'worker', count: 4, cpu: 1000, memoryMb: 1024, gpus: 1 },
      ],
    }))])
      .when(schedule())
      .then((o) => {
        const debits = o.events.filter((e): e is HostDebited => e.type === 'HostDebited');
        // binpack: after the workers, gpu1 is the tighter host, so the driver shares it
        expect(debits.map((d) => [d.role, d.node, d.members])).toEqual([['worker', 'gpu1', [1, 2, 3, 4]], ['driver', 'gpu1', [0]]]);
        // allocations come in member order
        expect(o.commits[0]!.allocations.map((a) => a.role)).toEqual(['driver', 'worker']);
        clean(o);
      });
  });

  test('a later role that cannot be placed fails the whole gang and writes no debit', () => {
    given([register(node('gpu1', { gpus: 4, cpu: 4000 })), submit(job('h', {
      roles: [
        { name: 'driver', count: 1, cpu: 2500, memoryMb: 1024 },
        { name: 'worker', count: 4, cpu: 500, memoryMb: 1024, gpus: 1 },
      ],
    }))])
      .when(schedule())
      .then((o) => {
        expect(o.commits).toHaveLength(0);
        expect(written(o, 'HostDebited')).toBe(0);
        expect(nodeUse(o.state, 'gpu1')).toEqual({ slots: 0, cpu: 0, gpus: [] });
        clean(o);
      });
  });
});

describe('unsatisfiable cache', () => {
  test('an identical second request is pended from the cache without the allocator, and re-evaluated next session', () => {
    const g = given([register(slotNode('n1', 2)), submit(job('j1', { tasks: 3 })), submit(job('j2', { tasks: 3 }))]);
    g.when(schedule()).then((o) => {
      const [a1, a2] = o.aborts as [GangAborted, GangAborted];
      expect(a1).toMatchObject({ jobId: 'j1', final: false, reason: { category: 'placement-unsatisfiable' } });
      expect(a1.reason.cached).toBeUndefined();
      expect(a2).toMatchObject({ jobId: 'j2', final: false, reason: { category: 'placement-unsatisfiable', cached: true } });
      expect(o.cluster.lastStats).toMatchObject({ attempted: 2, allocatorRuns: 1, cacheHits: 1 });
      // the written (non-cached) exhaustion entered the state's cache too, through evolve
      expect(Object.values(o.state.unsatisfiable)).toEqual(['placement-unsatisfiable']);
    })
      // a node joins that fits one of them: the cache was cleared at SessionStarted, so both are
      // evaluated fresh (j1 commits, j2 then fails on its own evaluation)
      .when(register(slotNode('n2', 3)))
      .when(schedule())
      .then((o) => {
        expect(o.cluster.lastStats).toMatchObject({ attempted: 2, allocatorRuns: 2, cacheHits: 0 });
        expect(o.commits.map((c) => c.jobId)).toEqual(['j1']);
        const j2 = o.aborts.find((a) => a.jobId === 'j2')!;
        expect(j2.reason).toMatchObject({ category: 'insufficient-resources' });
        expect(j2.reason.cached).toBeUndefined();
      });
  });

  test('a different identity does not share the cache entry', () => {
    given([register(slotNode('n1', 2)), submit(job('j1', { tasks: 3 })), submit(job('j2', { tasks: 3, user: 'bob' }))])
      .when(schedule())
      .then((o) => {
        expect(o.cluster.lastStats).toMatchObject({ allocatorRuns: 2, cacheHits: 0 });
        expect(o.aborts.every((a) => a.reason.cached === undefined)).toBe(true);
      });
  });
});

describe('pend reasons', () => {
  test('no up, undrained host passing select is no-matching-hosts, with host counts', () => {
    given([register(node('n1', { labels: { zone: 'a' } })), register(node('n2', { labels: { zone: 'b' } })), submit(job('j', { select: "zone == 'c'" }))])
      .when(schedule())
      .then((o) => {
        expect(o.aborts[0]!.reason).toMatchObject({ category: 'no-matching-hosts', hosts: { 'select-mismatch': 2 } });
      });
  });

  test('insufficient resources counts hosts per reason for the heaviest member', () => {
    given([
      register(node('g1', { gpus: 1, cpu: 8000 })),
      register(node('g2', { gpus: 2, cpu: 1000 })),
      register(node('g3', { gpus: 1, cpu: 8000 })),
      register(node('c1', { labels: { zone: 'x' } })),
      submit(job('fill', { tasks: 2, gpus: 1, cpu: 1000, policy: 'spread', select: 'gpus >= 1 && cpu > 4000' })),
    ])
      .when(schedule())
      .when(submit(job('j', { tasks: 2, gpus: 1, cpu: 2000, select: 'gpus >= 1' })))
      .when(schedule())
      .then((o) => {
        expect(o.aborts[0]!.reason).toMatchObject({
          category: 'insufficient-resources',
          hosts: { 'select-mismatch': 1, 'insufficient-cpu': 1, 'insufficient-gpu': 2 },
        });
      });
  });

  test('a failed attempt whose category did not change writes nothing', () => {
    given([register(slotNode('n1', 2)), submit(job('big', { tasks: 2 })), submit(job('j', { tasks: 2 }))])
      .when(schedule())
      .then((o) => expect(o.aborts.map((a) => a.jobId)).toEqual(['j']))
      // a node joins (so every pending job is retried) that does not help
      .when(register(node('other', { labels: { kind: 'tiny' }, cpu: 100 })))
      .when(schedule())
      .then((o) => {
        expect(o.events.map((e) => e.type)).toEqual(['SessionStarted']);
        expect(o.cluster.lastStats).toMatchObject({ attempted: 1, allocatorRuns: 1, abortsWritten: 0 });
      });
  });
});

test('a session is deterministic: the same state gives the same events', () => {
  const g = given([register(slotNode('n1', 3)), register(node('n2', { gpus: 4, domains: 2 })), submit(job('a', { tasks: 5 })), submit(job('b', { tasks: 2, gpus: 1, gpuLocality: true }))]);
  const first = runSession(g.cluster.state, 5).parts;
  const second = runSession(g.cluster.state, 5).parts;
  expect(second).toEqual(first);
  expect(first.length).toBeGreaterThan(0);
});

describe('gpuLocality across roles', () => {
  test('roles packed on one host take their GPUs from the domain the first role took', () => {
    given([
      register(node('n1', { gpus: 8, domains: 2, cpu: 64000 })),
      submit(job('a', { tasks: 1, gpus: 1 })),
    ])
      .when(schedule())
      .when(submit(job('loc', {
        gpuLocality: true,
        roles: [{ name: 'big', count: 1, gpus: 2 }, { name: 'small', count: 2, gpus: 1 }],
      })))
      .when(schedule())
      .then((o) => {
        const ids = o.commits[0]!.allocations.flatMap((a) => a.gpuIds).sort((x, y) => x - y);
        // domain 0 has 3 free devices (1, 2, 3), too few for all 4: everything goes to domain 1
        expect(ids).toEqual([4, 5, 6, 7]);
        clean(o);
      });
  });
});
