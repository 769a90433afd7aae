import { describe, expect, test } from 'vitest';
import { decisionMessages, shardGet } from '@muster/core';
import type { BindMessage, JobState, OutboundMessage, SchedulerEvent, State, StopMessage } from '@muster/core';
import type { Cluster } from '@muster/core/testing';
import { job, node } from '@muster/core/testing';
import type { JobOptions, RoleOptions } from '@muster/core/testing';
import { advance, complete, done, given, queue, register, schedule, submit } from '@muster/core/testing';
import type { Step } from '@muster/core/testing';

// DESIGN.md §13, contract v1.1: elastic gangs (role minCount), grown in later sessions and shrunk
// under preemption before they are stopped.

const gpuHosts = (n: number): Step[] => Array.from({ length: n }, (_, i) => register(node(`h${i + 1}`, { gpus: 8, cpu: 64_000, memoryMb: 512_000 })));
/** A gang of one role of `count` one-GPU members, at least `minCount` of them. */
const elastic = (id: string, minCount: number, count: number, o: JobOptions = {}) =>
  job(id, { roles: [{ name: 'worker', count, minCount, gpus: 1, cpu: 1000, memoryMb: 1024 }], ...o });
const gpuJob = (id: string, tasks: number, o: JobOptions = {}) => job(id, { tasks, gpus: 1, cpu: 1000, memoryMb: 1024, ...o });
const of = <T extends SchedulerEvent['type']>(events: readonly SchedulerEvent[], type: T) => events.filter((e): e is Extract<SchedulerEvent, { type: T }> => e.type === type);
const jobOf = (state: State, id: string): JobState => shardGet(state.jobs, id)!;
/** The member numbers a job holds now. */
const held = (state: State, id: string): number[] => jobOf(state, id).members.flatMap((m, i) => (m === null ? [] : [i]));
/** The messages the leader publishes for the last transaction that holds an event of `type` for job `id`. */
const messagesOf = (cluster: Cluster, type: SchedulerEvent['type'], id: string): OutboundMessage[] => {
  const tx = cluster.transactions.findLast((t) => t.tx.events.some((e) => e.type === type && 'jobId' in e && e.jobId === id))!;
  return decisionMessages(tx.seq, tx.tx, (jobId) => shardGet(cluster.state.jobs, jobId));
};
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('elastic job specs (bad input is rejected with its path, nothing applied)', () => {
  const role = (r: Partial<RoleOptions>): RoleOptions => ({ name: 'w', count: 4, gpus: 0, ...r });
  test.each([
    ['a minCount above the count', { roles: [role({ minCount: 5 })] }, 'roles.0.minCount', /5 is above the role's count 4/],
    ['a minCount of 0', { roles: [role({ minCount: 0 })] }, 'roles.0.minCount', /minCount/],
    ['an elastic gang kept warm', { roles: [role({ minCount: 2 })], minInstances: 4 }, 'minInstances', /elastic role/],
  ])('%s', (_, o, path, message) => {
    const o2 = given([]).when(submit(job('bad', o)));
    const rejected = of(o2.events, 'JobRejected')[0]!;
    expect(rejected.reason).toMatchObject({ category: 'invalid', path });
    expect(rejected.reason.message).toMatch(message);
    expect(shardGet(o2.state.jobs, 'bad')).toBeUndefined();
  });

  test('a minCount equal to the count is no elastic role: the job is accepted as a plain one', () => {
    const o = given(gpuHosts(1)).when(submit(elastic('j', 4, 4)));
    expect(JSON.stringify(of(o.events, 'JobSubmitted')[0]!.job)).not.toContain('minCount');
  });
});

describe('an elastic gang commits at the largest size that fits', () => {
  test('on a busy cluster it starts between its minimum and its count, all or nothing at that size, with the lowest member numbers', () => {
    const o = given([...gpuHosts(4), submit(gpuJob('busy', 16)), schedule()])
      .when(submit(elastic('e', 8, 32))).when(schedule());
    const commit = o.commits.find((c) => c.jobId === 'e')!;
    expect(commit.allocations.reduce((n, a) => n + a.members.length, 0)).toBe(16);
    expect(of(o.events, 'MemberBound').filter((b) => b.jobId === 'e').map((b) => b.member)).toEqual(range(0, 16));
    expect(held(o.state, 'e')).toEqual(range(0, 16));
    expect(o.state.elastic).toBeDefined();
  });

  test('below its minimum it waits, pended like any gang short of resources', () => {
    const o = given([...gpuHosts(4), submit(gpuJob('busy', 28)), schedule()])
      .when(submit(elastic('e', 8, 32))).when(schedule());
    expect(o.commits).toEqual([]);
    expect(o.aborts.find((a) => a.jobId === 'e')!.reason.category).toBe('insufficient-resources');
  });

  test('on an empty cluster it commits whole and is no candidate for growth', () => {
    const o = given(gpuHosts(4)).when(submit(elastic('e', 8, 32))).when(schedule());
    expect(held(o.state, 'e')).toHaveLength(32);
    expect(o.state.elastic).toBeUndefined();
  });

  test('every role reaches its minimum first, then each grows in placement order, heaviest first', () => {
    // 12 GPUs and plenty of CPU: trainers (1 GPU each, min 4 of 16) are heavier than loaders (CPU only, min 2 of 8)
    const o = given([register(node('h1', { gpus: 12, cpu: 64_000, memoryMb: 512_000 }))])
      .when(submit(job('e', { roles: [
        { name: 'loader', count: 8, minCount: 2, cpu: 1000, memoryMb: 1024 },
        { name: 'trainer', count: 16, minCount: 4, gpus: 1, cpu: 1000, memoryMb: 1024 },
      ] }))).when(schedule());
    // loaders are members 0..7, trainers 8..23: all 8 loaders and 12 trainers fit
    expect(held(o.state, 'e')).toEqual([...range(0, 8), ...range(8, 20)]);
  });
});

describe('growth in later sessions', () => {
  test('as jobs finish it grows to full size in an all-or-nothing step: GangResized with the whole allocation, binds for the members added', () => {
    const g = given([...gpuHosts(4), submit(gpuJob('busy', 16)), schedule(), submit(elastic('e', 8, 32)), schedule()]);
    g.cluster.run(complete('busy'));
    const o = g.when(schedule());
    const resized = o.resizes.find((r) => r.jobId === 'e')!;
    expect(resized.members).toBe(32);
    expect(resized.allocations.flatMap((a) => a.members).sort((a, b) => a - b)).toEqual(range(0, 32));
    expect(resized.by).toBeUndefined();
    expect(of(o.events, 'MemberBound').filter((b) => b.jobId === 'e').map((b) => b.member)).toEqual(range(16, 32));
    // the binds, debits and the resize are one transaction
    const part = o.parts.find((p) => p.includes(resized))!;
    expect(of(part, 'HostDebited').filter((d) => d.jobId === 'e').flatMap((d) => d.members).sort((a, b) => a - b)).toEqual(range(16, 32));
    expect(held(o.state, 'e')).toEqual(range(0, 32));
    expect(o.state.usage.users.alice!.gpus).toBe(32);
    // the agents are told to start exactly the members added; the publisher sees the resize
    const messages = messagesOf(g.cluster, 'GangResized', 'e');
    const binds = messages.filter((m) => m.subject.startsWith('muster.bind.')).map((m) => m.payload as BindMessage);
    expect(binds.flatMap((b) => b.parts.flatMap((p) => p.members)).sort((a, b) => a - b)).toEqual(range(16, 32));
    expect(binds.flatMap((b) => b.parts.flatMap((p) => p.memberGpuIds)).every((ids) => ids.length === 1)).toBe(true);
    expect(messages.filter((m) => m.subject === 'muster.decision.e').map((m) => (m.payload as SchedulerEvent).type)).toEqual(['GangResized']);
    // at full size it no longer grows
    expect(shardGet(o.state.elastic!, 'e')).toBeUndefined();
    // and it finishes when every member it holds has finished
    const end = g.when(complete('e'));
    expect(of(end.events, 'JobFinished').map((f) => f.jobId)).toEqual(['e']);
  });

  test('it grows only after the pending jobs ahead of it in the order had their turn', () => {
    const g = given([...gpuHosts(4), submit(gpuJob('busy', 16)), schedule(), submit(elastic('e', 8, 32)), schedule(),
      submit(gpuJob('urgent', 8, { priority: 5, user: 'bob' })), schedule()]);
    g.cluster.run(complete('busy'));
    const o = g.when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['urgent']);
    // 16 GPUs freed, 8 went to the job ahead: the gang grew by the other 8
    expect(o.resizes.find((r) => r.jobId === 'e')!.members).toBe(24);
  });

  test('a session with nothing freed does not try to grow it, and writes nothing for it', () => {
    const g = given([...gpuHosts(4), submit(gpuJob('busy', 16)), schedule(), submit(elastic('e', 8, 32)), schedule()]);
    const o = g.when(submit(gpuJob('other', 1, { user: 'bob' }))).when(schedule());
    expect(o.resizes).toEqual([]);
  });

  test('growth keeps the placement: spread takes only hosts the gang does not use yet, same-node only its own host', () => {
    const hosts = [1, 2, 3, 4].map((i) => register(node(`h${i}`, { cpu: 4000, memoryMb: 64_000 })));
    const spread = given([...hosts, submit(job('busy', { tasks: 2, cpu: 4000, policy: 'spread' })), schedule(),
      submit(job('s', { roles: [{ name: 'w', count: 4, minCount: 1, cpu: 1000 }], policy: 'spread' })), schedule()]);
    expect(held(spread.cluster.state, 's')).toHaveLength(2);
    spread.cluster.run(complete('busy'));
    spread.cluster.run(schedule());
    const nodes = jobOf(spread.cluster.state, 's').members.map((m) => m!.node);
    expect(new Set(nodes).size).toBe(4);

    const same = given([...hosts, submit(job('busy', { tasks: 1, cpu: 2000, policy: 'same-node' })), schedule(),
      submit(job('n', { roles: [{ name: 'w', count: 8, minCount: 2, cpu: 1000 }], policy: 'same-node' })), schedule()]);
    const first = jobOf(same.cluster.state, 'n').members.find((m) => m !== null)!.node;
    same.cluster.run(complete('busy'));
    same.cluster.run(schedule());
    const members = jobOf(same.cluster.state, 'n').members.filter((m) => m !== null);
    expect(new Set(members.map((m) => m!.node))).toEqual(new Set([first]));
  });

  test('a member of the added ones finishing is accepted; a member not bound is refused', () => {
    const g = given([...gpuHosts(1), submit(gpuJob('busy', 4)), schedule(), submit(elastic('e', 2, 8)), schedule()]);
    expect(held(g.cluster.state, 'e')).toEqual(range(0, 4));
    const refused = g.when(done('h1', 'e', 6));
    expect(of(refused.events, 'InputRejected')[0]!.reason).toMatchObject({ path: 'member' });
  });
});

describe('shrinking under preemption', () => {
  const team = (): Step[] => [...gpuHosts(4), queue({ name: 'q', preemption: { withinQueue: 'lower-priority' } })];

  test('a higher-priority job takes members above the minimum, newest first, instead of stopping the gang', () => {
    const g = given([...team(), submit(elastic('e', 8, 32, { queue: 'q' })), schedule(), advance(1000)]);
    expect(held(g.cluster.state, 'e')).toHaveLength(32);
    const o = g.when(submit(gpuJob('high', 8, { queue: 'q', priority: 5, user: 'bob' }))).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['high']);
    expect(o.aborts.filter((a) => a.jobId === 'e')).toEqual([]);
    const resized = o.resizes.find((r) => r.jobId === 'e')!;
    expect(resized).toMatchObject({ members: 24, by: 'high' });
    const released = of(o.events, 'AllocationReleased').filter((r) => r.jobId === 'e');
    expect(released.every((r) => r.cause === 'preempted')).toBe(true);
    expect(released.flatMap((r) => r.members).sort((a, b) => a - b)).toEqual(range(24, 32));
    // the shrink and the preemptor's commit are one transaction
    const part = o.parts.find((p) => p.includes(resized))!;
    expect(of(part, 'GangCommitted').map((c) => c.jobId)).toEqual(['high']);
    expect(jobOf(o.state, 'e').status).toBe('running');
    expect(held(o.state, 'e')).toEqual(range(0, 24));
    // the agents are told to stop exactly the members given up
    const stops = messagesOf(g.cluster, 'GangResized', 'e').filter((m) => m.subject.startsWith('muster.stop.')).map((m) => m.payload as StopMessage);
    expect(stops.flatMap((m) => m.members).sort((a, b) => a - b)).toEqual(range(24, 32));
    expect(messagesOf(g.cluster, 'GangResized', 'e').some((m) => m.subject.startsWith('muster.bind.') && (m.payload as BindMessage).jobId === 'e')).toBe(false);
    // it may grow again when room frees, with the same member numbers
    g.cluster.run(complete('high'));
    const grown = g.when(schedule()).resizes.find((r) => r.jobId === 'e')!;
    expect(grown.members).toBe(32);
    expect(held(g.cluster.state, 'e')).toEqual(range(0, 32));
  });

  test('when shrinking to the minimum is not enough, the gang is stopped whole and requeued', () => {
    const g = given([...team(), submit(elastic('e', 24, 32, { queue: 'q' })), schedule(), advance(1000)]);
    const o = g.when(submit(gpuJob('high', 16, { queue: 'q', priority: 5, user: 'bob' }))).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['high']);
    expect(o.aborts.find((a) => a.jobId === 'e')!.reason).toMatchObject({ category: 'preempted', by: 'high' });
    expect(o.resizes).toEqual([]);
    expect(jobOf(o.state, 'e').status).toBe('pending');
    expect(held(o.state, 'e')).toEqual([]);
  });

  test('a gang stopped whole in a session is not grown later in that session, though room freed', () => {
    const g = given([...team(), submit(gpuJob('busy', 8, { queue: 'q', user: 'bob' })), schedule(), advance(1000),
      submit(elastic('e', 20, 32, { queue: 'q' })), schedule(), advance(1000)]);
    expect(held(g.cluster.state, 'e')).toHaveLength(24);
    // busy's members finish (room frees: every listed gang gets a turn) and a job needing more than e can give up arrives
    g.cluster.run(submit(gpuJob('high', 16, { queue: 'q', priority: 5, user: 'carol' })));
    g.cluster.run(complete('busy'));
    const o = g.when(schedule());
    expect(o.aborts.find((a) => a.jobId === 'e')!.reason.category).toBe('preempted');
    expect(o.resizes).toEqual([]);
    expect(jobOf(o.state, 'e').status).toBe('pending');
    expect(held(o.state, 'e')).toEqual([]);
  });

  test('shrinking is preferred to stopping another whole gang that would also make room', () => {
    const g = given([...team(), submit(gpuJob('plain', 8, { queue: 'q', user: 'carol' })), schedule(), advance(1000),
      submit(elastic('e', 8, 24, { queue: 'q' })), schedule(), advance(1000)]);
    expect(held(g.cluster.state, 'e')).toHaveLength(24);
    const o = g.when(submit(gpuJob('high', 8, { queue: 'q', priority: 5, user: 'bob' }))).when(schedule());
    expect(o.aborts.filter((a) => a.reason.category === 'preempted')).toEqual([]);
    expect(o.resizes.find((r) => r.jobId === 'e')!.members).toBe(16);
    expect(jobOf(o.state, 'plain').status).toBe('running');
  });
});
