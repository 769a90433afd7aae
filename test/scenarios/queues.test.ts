import { describe, expect, test } from 'vitest';
import { explain, shardGet } from '@muster/core';
import type { GangAborted, GangCommitted, InputRejected, SchedulerEvent } from '@muster/core';
import { job, node } from '@muster/core/testing';
import { Cluster, advance, complete, given, policy, queue, register, schedule, submit } from '@muster/core/testing';
import type { Step } from '@muster/core/testing';

// DESIGN.md §12, contract v1.1: queues, quotas, hierarchical fair share and preemption.

const gpuHosts = (n: number): Step[] => Array.from({ length: n }, (_, i) => register(node(`h${i + 1}`, { gpus: 8, cpu: 64_000, memoryMb: 512_000 })));
/** A gang of `tasks` members of one GPU each, in a queue. */
const gpuJob = (id: string, q: string, tasks: number, extra: { priority?: number; user?: string } = {}) =>
  job(id, { tasks, gpus: 1, cpu: 1000, memoryMb: 1024, queue: q, user: extra.user ?? q, priority: extra.priority ?? 0 });
const teams = (extra: Record<string, unknown> = {}): Step[] => [
  queue({ name: 'a', guaranteed: { gpus: 16 }, ...extra }),
  queue({ name: 'b', guaranteed: { gpus: 16 } }),
];
const of = <T extends SchedulerEvent['type']>(events: readonly SchedulerEvent[], type: T) => events.filter((e): e is Extract<SchedulerEvent, { type: T }> => e.type === type);
const rejection = (events: readonly SchedulerEvent[]): InputRejected => of(events, 'InputRejected')[0]!;

describe('queue specs (bad input is rejected with its path, nothing applied)', () => {
  test.each([
    ['a parent that does not exist', { name: 'x', parent: 'nope' }, 'unknown', 'parent'],
    ['a negative quota', { name: 'x', guaranteed: { gpus: -1 } }, 'invalid', 'guaranteed.gpus'],
    ['an unknown field', { name: 'x', maxx: {} }, 'invalid', 'maxx'],
    ['a guarantee above the max', { name: 'x', guaranteed: { gpus: 8 }, max: { gpus: 4 } }, 'invalid', 'guaranteed.gpus'],
    ['a default limit above the maximum', { name: 'x', defaultRuntimeLimitMs: 10, maxRuntimeLimitMs: 5 }, 'invalid', 'defaultRuntimeLimitMs'],
    ['a weight of 0', { name: 'x', weight: 0 }, 'invalid', 'weight'],
    ['its own parent', { name: 'x', parent: 'x' }, 'invalid', 'parent'],
    ['an unknown preemption mode', { name: 'x', preemption: { withinQueue: 'always' } }, 'invalid', 'preemption.withinQueue'],
  ])('%s', (_, spec, category, path) => {
    const cluster = new Cluster();
    const events = cluster.run(queue(spec)).flat();
    expect(rejection(events).reason).toMatchObject({ category, path });
    expect(rejection(events).reason.message).toContain(path);
    expect(cluster.state.queues).toBeUndefined();
  });

  test('a name that is not the subject\'s is rejected', () => {
    const cluster = new Cluster();
    const events = cluster.run({ kind: 'input', subject: 'muster.in.queue.a.set', body: { name: 'b' } }).flat();
    expect(rejection(events).reason).toMatchObject({ category: 'invalid', path: 'name' });
  });

  test('a cycle is rejected and the tree stays as it was', () => {
    const g = given([queue({ name: 'r' }), queue({ name: 'c', parent: 'r' })]);
    const events = g.when(queue({ name: 'r', parent: 'c' })).events;
    expect(rejection(events).reason).toMatchObject({ category: 'invalid', path: 'parent' });
    expect(rejection(events).reason.message).toMatch(/cycle/);
    expect(g.cluster.state.queues!.r!.parent).toBeUndefined();
  });

  test('a queue replaced keeps one entry with the new spec', () => {
    const g = given([queue({ name: 'a', max: { gpus: 4 } })]);
    g.when(queue({ name: 'a', max: { gpus: 8 } }));
    expect(Object.keys(g.cluster.state.queues!)).toEqual(['a']);
    expect(g.cluster.state.queues!.a!.max).toEqual({ gpus: 8 });
  });
});

describe('jobs and queues', () => {
  test('while no queue is defined every job is in the implicit default queue, as in contract v1', () => {
    const o = given(gpuHosts(1)).when(submit(gpuJob('j', 'anything', 2))).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['j']);
  });

  test('once queues are defined, a job naming an unknown or non-leaf queue is rejected at identity.queue', () => {
    const g = given([queue({ name: 'research' }), queue({ name: 'vision', parent: 'research' })]);
    const unknown = of(g.when(submit(gpuJob('j1', 'nope', 1))).events, 'JobRejected')[0]!;
    expect(unknown.reason).toMatchObject({ category: 'unknown', path: 'identity.queue' });
    const parent = of(g.when(submit(gpuJob('j2', 'research', 1))).events, 'JobRejected')[0]!;
    expect(parent.reason).toMatchObject({ category: 'invalid', path: 'identity.queue' });
    expect(of(g.when(submit(gpuJob('j3', 'vision', 1))).events, 'JobSubmitted')).toHaveLength(1);
  });

  test('jobs accepted before queues were defined still run, in the implicit default queue', () => {
    const g = given([...gpuHosts(1), submit(gpuJob('old', 'legacy', 2)), queue({ name: 'a' })]);
    expect(g.when(schedule()).commits.map((c) => c.jobId)).toEqual(['old']);
  });

  test('a queue\'s runtime limits: the default fills a job without one, a limit above the maximum is rejected', () => {
    const g = given([queue({ name: 'p', maxRuntimeLimitMs: 60_000 }), queue({ name: 'a', parent: 'p', defaultRuntimeLimitMs: 30_000 })]);
    g.when(submit(gpuJob('none', 'a', 1)));
    expect(shardGet(g.cluster.state.jobs, 'none')!.spec.runtimeLimitMs).toBe(30_000);
    const over = of(g.when(submit({ ...gpuJob('long', 'a', 1), runtimeLimitMs: 90_000 })).events, 'JobRejected')[0]!;
    expect(over.reason).toMatchObject({ category: 'invalid', path: 'runtimeLimitMs' });
    expect(over.reason.message).toMatch(/60000/);
    g.when(queue({ name: 'b', parent: 'p' }));
    g.when(submit(gpuJob('inherits', 'b', 1)));
    expect(shardGet(g.cluster.state.jobs, 'inherits')!.spec.runtimeLimitMs).toBe(60_000);
  });
});

describe('admission against max on the whole path', () => {
  test('a gang that would pass its parent\'s max waits with quota, naming the queue and resource, and runs when use drops', () => {
    const g = given([...gpuHosts(4), queue({ name: 'team', max: { gpus: 12 } }), queue({ name: 't1', parent: 'team' }), queue({ name: 't2', parent: 'team' }),
      submit(gpuJob('first', 't1', 8)), schedule()]);
    const o = g.when(submit(gpuJob('second', 't2', 8))).when(schedule());
    expect(o.commits).toEqual([]);
    const abort = o.aborts[0]!;
    expect(abort).toMatchObject({ jobId: 'second', final: false, reason: { category: 'quota' } });
    expect(abort.reason.message).toMatch(/queue team: gpus in use 8 plus this gang's 8 would pass its max of 12/);
    // explain names the quota that decides it
    expect(explain(o.state, 'second')!.text).toMatch(/^job second is pending \(quota: queue team: gpus in use 8 plus this gang's 8 would pass its max of 12\)/);
    // a quota refusal is never cached: an identical job in the same session is refused by the quota, not the cache
    expect(abort.reason.cached).toBeUndefined();
    g.cluster.run(complete('first'));
    expect(g.when(schedule()).commits.map((c) => c.jobId)).toEqual(['second']);
  });
});

describe('hierarchical DRF between sibling queues', () => {
  test('the queue with the lower weighted share goes first, whatever the priorities across queues', () => {
    const g = given([...gpuHosts(1), queue({ name: 'a', guaranteed: { gpus: 4 } }), queue({ name: 'b', guaranteed: { gpus: 4 } }),
      submit(gpuJob('a1', 'a', 4)), schedule()]);
    // a uses its whole guarantee; b none. b's low-priority job goes before a's high-priority one.
    g.cluster.run(submit(gpuJob('a2', 'a', 4, { priority: 100 })));
    g.cluster.run(submit(gpuJob('b1', 'b', 4, { priority: -5 })));
    const o = g.when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['b1']);
  });

  test('weights: a queue of weight 3 keeps going first until its use is three times the other\'s', () => {
    const g = given([...gpuHosts(2), queue({ name: 'heavy', weight: 3 }), queue({ name: 'light', weight: 1 }),
      ...Array.from({ length: 6 }, (_, i) => submit(gpuJob(`h${i}`, 'heavy', 2))),
      ...Array.from({ length: 6 }, (_, i) => submit(gpuJob(`l${i}`, 'light', 2)))]);
    const o = g.when(schedule());
    const ids = o.commits.map((c) => c.jobId);
    expect(ids).toHaveLength(8);
    expect(ids.filter((id) => id.startsWith('h'))).toHaveLength(6);
    expect(ids.filter((id) => id.startsWith('l'))).toHaveLength(2);
  });
});

describe('fair share on decayed use (policy.fairShareHalfLifeMs)', () => {
  /** Queue a ran the whole cluster for an hour and finished; then a and b each submit a gang that fills it. */
  const history = (halfLife: Step[]): ReturnType<typeof given> => given([
    ...halfLife, ...gpuHosts(1), queue({ name: 'a' }), queue({ name: 'b' }),
    submit(gpuJob('a0', 'a', 8)), schedule(), advance(3_600_000), complete('a0'), advance(60_000),
    submit(gpuJob('a1', 'a', 8)), submit(gpuJob('b1', 'b', 8)),
  ]);

  test('without a half-life, current use decides: both use nothing, so the tie goes by name', () => {
    expect(history([]).when(schedule()).commits.map((c) => c.jobId)).toEqual(['a1']);
  });

  test('with a half-life, the queue that used the cluster for the last hour goes after the one that did not', () => {
    expect(history([policy({ fairShareHalfLifeMs: 3_600_000 })]).when(schedule()).commits.map((c) => c.jobId)).toEqual(['b1']);
  });

  test('long after, the history has decayed away and the tie is back to names', () => {
    const g = history([policy({ fairShareHalfLifeMs: 60_000 })]);
    g.cluster.run(advance(24 * 3_600_000));
    expect(g.when(schedule()).commits.map((c) => c.jobId)).toEqual(['a1']);
  });
});

describe('preemption', () => {
  /** Team a has filled the cluster (32 GPUs in four 8-GPU gangs); b is guaranteed half of it. */
  const borrowed = (extra: Record<string, unknown> = {}, steps: Step[] = []): ReturnType<typeof given> => given([
    ...gpuHosts(4), ...teams(extra), ...steps,
    ...[1, 2, 3, 4].map((i) => submit(gpuJob(`a${i}`, 'a', 8))), schedule(), advance(1000),
  ]);

  test('reclaim: a queue within its guarantee gets it back in one session, by stopping whole gangs of the borrower in the same transaction', () => {
    const g = borrowed();
    g.cluster.run(submit(gpuJob('b1', 'b', 16)));
    const o = g.when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['b1']);
    const stopped = o.aborts.filter((a) => a.reason.category === 'preempted');
    // two of a's gangs: all started together with the same priority and size, so by id
    expect(stopped.map((a) => a.jobId).sort()).toEqual(['a1', 'a2']);
    for (const a of stopped) {
      expect(a).toMatchObject({ final: false, reason: { by: 'b1' } });
      expect(a.reason.message).toMatch(/preempted by job b1: queue b reclaims its guarantee from queue a/);
    }
    // victims' releases, aborts, requeues and the preemptor's commit are one transaction
    const part = o.parts.find((p) => p.some((e) => e.type === 'GangCommitted' && e.jobId === 'b1'))!;
    expect(of(part, 'GangAborted').map((a) => a.jobId).sort()).toEqual(['a1', 'a2']);
    expect(of(part, 'AllocationReleased').every((r) => r.cause === 'preempted')).toBe(true);
    expect(of(part, 'JobPended').map((p) => p.jobId).sort()).toEqual(['a1', 'a2']);
    // the victims are pending again (explain names the preemption), and run again when room frees
    expect(shardGet(o.state.jobs, 'a1')!.status).toBe('pending');
    expect(explain(o.state, 'a1')!.text).toMatch(/pending \(preempted: preempted by job b1: queue b reclaims its guarantee from queue a/);
    g.cluster.run(complete('b1'));
    g.cluster.run(schedule());
    expect(shardGet(g.cluster.state.jobs, 'a1')!.status).toBe('running');
    expect(shardGet(g.cluster.state.jobs, 'a2')!.status).toBe('running');
  });

  test('no victims when preemption would not make the gang fit', () => {
    const g = borrowed();
    // 40 GPUs: more than the cluster has; b stays within no guarantee anyway, and nothing is stopped
    const o = g.when(submit(gpuJob('b1', 'b', 40))).when(schedule());
    expect(o.aborts.filter((a) => a.reason.category === 'preempted')).toEqual([]);
    const o2 = g.when(submit(gpuJob('b2', 'b', 16, { user: 'other' }))).when(schedule());
    expect(o2.commits.map((c) => c.jobId)).toEqual(['b2']);
  });

  test('a queue above its guarantee may not reclaim', () => {
    const g = borrowed();
    const o = g.when(submit(gpuJob('b1', 'b', 24))).when(schedule());
    expect(o.commits).toEqual([]);
    expect(o.aborts.filter((a) => a.reason.category === 'preempted')).toEqual([]);
  });

  test('reclaim never takes the victim queue below its guarantee', () => {
    // a holds 16 (its guarantee) plus 8 borrowed; c borrows 8 with no guarantee. b wants 16.
    const g = given([...gpuHosts(4), ...teams(), queue({ name: 'c' }),
      submit(gpuJob('a1', 'a', 8)), submit(gpuJob('a2', 'a', 8)), submit(gpuJob('a3', 'a', 8)), submit(gpuJob('c1', 'c', 8)), schedule(), advance(1000)]);
    const o = g.when(submit(gpuJob('b1', 'b', 16))).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['b1']);
    const victims = o.aborts.filter((a) => a.reason.category === 'preempted').map((a) => a.jobId).sort();
    // c (all borrowed, most over) first, then one of a's (by id): a keeps its 16
    expect(victims).toEqual(['a1', 'c1']);
    const a = o.state.usage.queues.a!;
    expect(a.gpus).toBe(16);
  });

  test('reclaim takes nothing from a queue that does not borrow on what it guarantees, though its parent borrows', () => {
    // every queue is guaranteed 0 GPUs (and names nothing else): research borrows through vision's
    // GPU gang; text runs a CPU-only gang, so it uses no more GPUs than it is guaranteed
    const guaranteedNoGpus = (name: string, parent?: string): Step => queue({ name, ...(parent === undefined ? {} : { parent }), guaranteed: { gpus: 0 } });
    const cpuJob = (id: string, q: string, cpu: number) => job(id, { tasks: 1, gpus: 0, cpu, memoryMb: 1024, queue: q, user: q });
    const g = given([...gpuHosts(1), guaranteedNoGpus('research'), guaranteedNoGpus('vision', 'research'), guaranteedNoGpus('text', 'research'), guaranteedNoGpus('ops'),
      submit(gpuJob('v1', 'vision', 1)), submit(cpuJob('t1', 'text', 60_000)), schedule(), advance(1000)]);
    // o1 would fit only by stopping text's gang; o2 fits by stopping vision's, which borrows
    const o = g.when(submit(cpuJob('o1', 'ops', 32_000))).when(submit(cpuJob('o2', 'ops', 3_500))).when(schedule());
    const stopped = o.aborts.filter((a) => a.reason.category === 'preempted');
    expect(stopped.map((a) => a.jobId)).toEqual(['v1']);
    expect(stopped[0]!.reason.message).toMatch(/queue ops reclaims its guarantee from queue vision, which borrows/);
    expect(o.commits.map((c) => c.jobId)).toEqual(['o2']);
    expect(shardGet(o.state.jobs, 't1')!.status).toBe('running');
    expect(shardGet(o.state.jobs, 'o1')!.status).toBe('pending');
  });

  test('reclaim from sibling leaves as far over guarantee (their parent decides) takes victims in §12\'s order across both, not leaf by leaf', () => {
    // research and its leaves are guaranteed 0 GPUs, so both leaves' sides are as far over as
    // research is; text (first by name) runs priority-1 gangs, vision a priority-0 one
    const guaranteedNoGpus = (name: string, parent?: string): Step => queue({ name, ...(parent === undefined ? {} : { parent }), guaranteed: { gpus: 0 } });
    const g = given([...gpuHosts(4), guaranteedNoGpus('research'), guaranteedNoGpus('text', 'research'), guaranteedNoGpus('vision', 'research'), queue({ name: 'ops', guaranteed: { gpus: 16 } }),
      ...['t1', 't2', 't3'].map((id) => submit(gpuJob(id, 'text', 8, { priority: 1 }))), submit(gpuJob('v1', 'vision', 8)), schedule(), advance(1000)]);
    const o = g.when(submit(gpuJob('o1', 'ops', 8))).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['o1']);
    const stopped = o.aborts.filter((a) => a.reason.category === 'preempted');
    expect(stopped.map((a) => a.jobId)).toEqual(['v1']);
    expect(stopped[0]!.reason.message).toMatch(/queue ops reclaims its guarantee from queue vision, which borrows/);
  });

  test('a queue with reclaim off is never a reclaim victim', () => {
    const o = borrowed({ preemption: { reclaim: false } }).when(submit(gpuJob('b1', 'b', 16))).when(schedule());
    expect(o.commits).toEqual([]);
    expect(o.aborts.filter((a) => a.reason.category === 'preempted')).toEqual([]);
  });

  test('the fewest victims: gangs the preemptor does not need are spared', () => {
    const g = given([...gpuHosts(4), ...teams(),
      // a: one big 16-GPU gang and two 8s; b needs 8
      submit(gpuJob('big', 'a', 16)), submit(gpuJob('s1', 'a', 8)), submit(gpuJob('s2', 'a', 8)), schedule(), advance(1000)]);
    const o = g.when(submit(gpuJob('b1', 'b', 8))).when(schedule());
    const victims = o.aborts.filter((a) => a.reason.category === 'preempted').map((a) => a.jobId);
    expect(victims).toHaveLength(1);
    expect(o.commits.map((c) => c.jobId)).toEqual(['b1']);
  });

  test('within a queue, with lower-priority preemption on, a higher-priority gang stops lower-priority ones', () => {
    const g = given([...gpuHosts(1), queue({ name: 'q', preemption: { withinQueue: 'lower-priority' } }),
      submit(gpuJob('low', 'q', 8, { priority: 1 })), schedule(), advance(1000)]);
    const same = g.when(submit(gpuJob('peer', 'q', 8, { priority: 1 }))).when(schedule());
    expect(same.aborts.filter((a) => a.reason.category === 'preempted')).toEqual([]);
    const o = g.when(submit(gpuJob('high', 'q', 8, { priority: 5 }))).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['high']);
    const abort = o.aborts.find((a) => a.jobId === 'low')!;
    expect(abort.reason).toMatchObject({ category: 'preempted', by: 'high' });
    expect(abort.reason.message).toMatch(/priority 5 is above its 1 in queue q/);
  });

  test('after a preemption the jobs still to try are ordered by the shares as they now are (the victims\' user holds less)', () => {
    const g = given([...gpuHosts(1), queue({ name: 'q', preemption: { withinQueue: 'lower-priority' } }),
      submit(gpuJob('low', 'q', 8, { priority: 0, user: 'u1' })), schedule(), advance(1000)]);
    // x (u2, who holds nothing) comes before y (u1, who holds the whole host) in submission and in share, for now
    g.cluster.run(submit(gpuJob('x', 'q', 4, { priority: 1, user: 'u2' })));
    g.cluster.run(submit(gpuJob('y', 'q', 4, { priority: 1, user: 'u1' })));
    g.cluster.run(submit(gpuJob('high', 'q', 4, { priority: 5, user: 'u2' })));
    const o = g.when(schedule());
    // high stops low (u1 then holds nothing, u2 half the host): y goes before x for the room left
    expect(o.commits.map((c) => c.jobId)).toEqual(['high', 'y']);
  });

  test('without withinQueue, priority alone stops nothing', () => {
    const g = given([...gpuHosts(1), queue({ name: 'q' }), submit(gpuJob('low', 'q', 8, { priority: 1 })), schedule(), advance(1000)]);
    const o = g.when(submit(gpuJob('high', 'q', 8, { priority: 5 }))).when(schedule());
    expect(o.commits).toEqual([]);
  });

  test('a gang younger than minRuntimeBeforePreemptionMs is no victim; its guard running out is a due time that makes a session preempt it', () => {
    const g = borrowed({}, [policy({ minRuntimeBeforePreemptionMs: 60_000 })]);
    const o = g.when(submit(gpuJob('b1', 'b', 16))).when(schedule());
    expect(o.commits).toEqual([]);
    // nothing new arrives; time passes to the guard's end: a session runs by itself
    g.cluster.run(advance(58_000));
    expect(g.when(schedule()).events).toEqual([]);
    g.cluster.run(advance(1_000));
    // at 60 s the first gangs (committed at 0) may be stopped
    const later = g.when(schedule());
    expect(later.commits.map((c) => c.jobId)).toEqual(['b1']);
  });

  test('a blocked job that can preempt does so rather than reserve', () => {
    const o = borrowed().when(submit({ ...gpuJob('b1', 'b', 16), runtimeLimitMs: 60_000 })).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['b1']);
    expect(of(o.events, 'GangReserved').filter((r) => r.jobId === 'b1')).toEqual([]);
  });

  test('victims of one preemption are never left partial: every member of each is released', () => {
    const o = borrowed().when(submit(gpuJob('b1', 'b', 16))).when(schedule());
    for (const a of o.aborts.filter((x): x is GangAborted => x.reason.category === 'preempted')) {
      const released = of(o.events, 'AllocationReleased').filter((r) => r.jobId === a.jobId).reduce((n, r) => n + r.members.length, 0);
      expect(released).toBe(8);
      const j = shardGet(o.state.jobs, a.jobId)!;
      expect(j.allocations).toEqual([]);
      expect(j.members.every((m) => m === null)).toBe(true);
    }
    const commit: GangCommitted = o.commits[0]!;
    expect(commit.allocations.reduce((n, x) => n + x.members.length, 0)).toBe(16);
  });
});
