import { describe, expect, test } from 'vitest';
import { decisionMessages, explain, shardGet } from '@muster/core';
import type { GangReserved, ReservationCleared, SchedulerEvent } from '@muster/core';
import { alternativesJob, job, slotNode } from '@muster/core/testing';
import { Cluster, advance, cancel, complete, done, given, policy, register, schedule, scheduleDueBy, submit } from '@muster/core/testing';
import type { Step } from '@muster/core/testing';

// DESIGN.md §11, contract v1.1: runtime limits, reservations and backfill, as given/when/then.

const small = (id: string, limitMs: number, extra: Record<string, unknown> = {}) => ({ ...job(id, { user: 'many' }), runtimeLimitMs: limitMs, ...extra });
const big = (id: string, tasks: number, extra: Record<string, unknown> = {}) => ({ ...job(id, { tasks, user: 'big', priority: 100 }), runtimeLimitMs: 60_000, ...extra });
const fourFull = (): Step[] => [
  ...[1, 2, 3, 4].map((i) => register(slotNode(`h${i}`, 8))),
  ...Array.from({ length: 32 }, (_, i) => submit(small(`s${i}`, 32_000))),
  schedule(),
];
const of = <T extends SchedulerEvent['type']>(events: readonly SchedulerEvent[], type: T) => events.filter((e): e is Extract<SchedulerEvent, { type: T }> => e.type === type);

/** Runs the "Why" of issue 12: every second one small job finishes and another (limit 32 s) arrives. */
function churn(cluster: Cluster, seconds: number, from = 0): SchedulerEvent[] {
  const out: SchedulerEvent[] = [];
  for (let t = 0; t < seconds; t++) {
    cluster.run(advance(1000));
    out.push(...cluster.run(complete(`s${from + t}`)).flat());
    out.push(...cluster.run(submit(small(`n${from + t}`, 32_000))).flat());
    out.push(...cluster.run(schedule()).flat());
  }
  return out;
}

describe('reservations and backfill (EASY, reserveDepth 1)', () => {
  test('a 32-member gang behind a stream of 1-member jobs is reserved, and commits at the time its reservation promised', () => {
    const g = given(fourFull());
    const reserved = of(g.when(submit(big('big', 32))).when(schedule()).events, 'GangReserved');
    expect(reserved).toEqual([expect.objectContaining({ jobId: 'big', startAt: 32_000, hosts: ['h1', 'h2', 'h3', 'h4'] })]);
    const events = churn(g.cluster, 32);
    // every newcomer would run past the reservation's start: each waits `reserved`, naming it
    const refusals = of(events, 'GangAborted').filter((e) => e.reason.category === 'reserved');
    expect(refusals.length).toBeGreaterThanOrEqual(31);
    expect(refusals[0]!.reason.message).toMatch(/would delay job big, reserved to start at 32000/);
    const commit = of(events, 'GangCommitted').find((c) => c.jobId === 'big');
    expect(commit?.at).toBe(32_000);
    expect(commit?.allocations.reduce((n, a) => n + a.members.length, 0)).toBe(32);
  });

  test('a short job that ends before the reserved start runs at once (backfill)', () => {
    const g = given([...fourFull(), submit(big('big', 32)), schedule(), advance(1000), complete('s0')]);
    const o = g.when(submit(small('short', 5_000))).when(schedule());
    expect(o.commits.map((c) => c.jobId)).toEqual(['short']);
    // and a long one that would still run at the reserved start waits
    g.cluster.run(complete('s1'));
    const held = g.when(submit(small('long', 40_000))).when(schedule());
    expect(held.aborts).toEqual([expect.objectContaining({ jobId: 'long', final: false, reason: expect.objectContaining({ category: 'reserved' }) })]);
  });

  test('with reserveDepth 0 the old behaviour returns: the gang starves behind the stream', () => {
    const g = given([policy({ reserveDepth: 0 }), ...fourFull(), submit(big('big', 32)), schedule()]);
    const events = churn(g.cluster, 40);
    expect(of(events, 'GangReserved')).toEqual([]);
    expect(of(events, 'GangCommitted').some((c) => c.jobId === 'big')).toBe(false);
    expect(shardGet(g.cluster.state.jobs, 'big')?.status).toBe('pending');
  });

  test('a log without a PolicySet decides under contract v1: no reservations, no limits', () => {
    const c = new Cluster({ v1: true });
    for (const step of [...fourFull(), submit(big('big', 32)), schedule()]) c.run(step);
    const events = churn(c, 40);
    expect(of(events, 'GangReserved')).toEqual([]);
    expect(of(events, 'GangCommitted').some((e) => e.jobId === 'big')).toBe(false);
    // n0 ran past its 32 s limit and was not stopped
    expect(shardGet(c.state.jobs, 'n0')?.status).toBe('running');
    expect(c.state.policy).toBeUndefined();
  });

  test('a reserved job displaced by a higher one, or cancelled, has its reservation cleared', () => {
    const g = given([...fourFull(), submit(big('big', 32)), schedule()]);
    const displaced = g.when(submit(big('bigger', 32, { priority: 200 }))).when(schedule());
    expect(of(displaced.events, 'GangReserved').map((e) => e.jobId)).toEqual(['bigger']);
    expect(of(displaced.events, 'ReservationCleared')).toEqual([{ type: 'ReservationCleared', jobId: 'big', session: expect.any(Number), reason: 'displaced' } satisfies ReservationCleared]);
    const cancelled = g.when(cancel('bigger'));
    expect(of(cancelled.events, 'ReservationCleared')).toEqual([expect.objectContaining({ jobId: 'bigger', reason: 'cancelled' })]);
    // the next session reserves the one left
    expect(of(g.when(schedule()).events, 'GangReserved').map((e) => e.jobId)).toEqual(['big']);
  });

  test('explain says when a reserved job should start, where, and which gangs it waits for; and why a job is held back', () => {
    const g = given([...fourFull(), submit(big('big', 32)), schedule(), advance(1000), complete('s0'), submit(small('long', 40_000)), schedule()]);
    const e = explain(g.cluster.state, 'big')!;
    expect(e.reservation?.startAt).toBe(32_000);
    expect(e.reservation?.hosts).toEqual(['h1', 'h2', 'h3', 'h4']);
    expect(e.reservation?.waitsFor.map((w) => w.jobId)).toHaveLength(31);
    expect(e.text).toMatch(/reserved to start at 32000 on h1, h2, h3, h4, waiting for s1 \(ends 32000\)/);
    expect(explain(g.cluster.state, 'long')!.text).toMatch(/held back: it would delay job big, reserved to start at 32000/);
    expect(explain(g.cluster.state, 's5')!).toMatchObject({ status: 'running', limitAt: 32_000 });
  });

  test('when the job that displaced a reservation times out, the displaced one is reserved again in that session', () => {
    const g = given([...fourFull(), submit(big('big', 32)), schedule(), submit(big('bigger', 32, { priority: 200, timeoutMs: 2_000 })), schedule()]);
    const o = g.when(advance(2_000)).when(schedule());
    expect(of(o.events, 'ReservationCleared')).toEqual([expect.objectContaining({ jobId: 'bigger', reason: 'timeout' })]);
    expect(of(o.events, 'GangReserved').map((e) => e.jobId)).toEqual(['big']);
  });

  test('a reservation is written only when it changes', () => {
    const g = given([...fourFull(), submit(big('big', 32)), schedule()]);
    // a node joins: a session runs, the plan is the same, nothing new is written about it
    const o = g.when(register(slotNode('h9', 1))).when(schedule());
    expect(of(o.events, 'GangReserved')).toEqual([]);
    expect(shardGet(o.state.jobs, 'big')?.reservation).toEqual({ startAt: 32_000, hosts: ['h1', 'h2', 'h3', 'h4'], session: 2 });
  });

  test('a reserved job keeps its reservation when an identical request failed before it in the same session (the promise to it holds)', () => {
    // two 5-slot hosts: a 1-member job runs until 1 s, so the 10-member one is reserved at 1 s
    const g = given([policy({ reserveDepth: 1 }), register(slotNode('h1', 5)), register(slotNode('h2', 5)),
      submit({ ...job('short', { tasks: 1 }), runtimeLimitMs: 1000 }), submit({ ...job('ten', { tasks: 10 }), runtimeLimitMs: 1000 }), schedule()]);
    expect(shardGet(g.cluster.state.jobs, 'ten')?.reservation?.startAt).toBe(1000);
    // a job ahead in the order asks first for the same 10 members (it fails: the session's cache
    // has it), then commits its other alternative; a later 1-member job must not take the reservation
    g.cluster.run(submit({ ...alternativesJob('either', [{ tasks: 10 }, { tasks: 2 }], { priority: 5 }), runtimeLimitMs: 1000 }));
    g.cluster.run(submit({ ...job('late', { tasks: 8 }), runtimeLimitMs: 1000 }));
    const o = g.when(schedule());
    expect(of(o.events, 'ReservationCleared')).toEqual([]);
    expect(shardGet(o.state.jobs, 'ten')?.reservation?.startAt).toBe(1000);
    expect(shardGet(o.state.jobs, 'late')?.reservation).toBeUndefined();
  });

  test('a job pended from the cache behind a reserved identical job gets no reservation, even with room for one', () => {
    const g = given([policy({ reserveDepth: 2 }), ...fourFull(), submit(big('a', 32)), submit(big('twin', 32)), schedule()]);
    const reserved = of(g.cluster.log.flat(), 'GangReserved') as GangReserved[];
    expect(reserved.map((r) => r.jobId)).toEqual(['a']);
    expect(shardGet(g.cluster.state.jobs, 'twin')?.pendReason?.cached).toBe(true);
  });

  test('a job held back by a reservation is not written again each time room frees and fills, and is once no reservation stands', () => {
    const g = given([...fourFull(), submit(big('big', 32)), schedule(), submit(small('long', 40_000)), schedule()]);
    const aborts = () => of(g.cluster.log.flat(), 'GangAborted').filter((e) => e.jobId === 'long').map((e) => [e.reason.category, e.reason.by]);
    const run = (...steps: Step[]) => steps.forEach((step) => g.cluster.run(step));
    expect(aborts()).toEqual([['insufficient-resources', undefined]]);
    // a slot frees: long fits only by delaying big, and waits; a short job backfills the slot
    run(advance(1000), complete('s0'), submit(small('f0', 5_000)), schedule());
    expect(aborts()).toEqual([['insufficient-resources', undefined], ['reserved', 'big']]);
    // room fills and frees again while big's reservation stands: long waits for the same thing
    for (let t = 1; t <= 4; t++) {
      run(advance(1000), submit(small(`g${t}`, 5_000)), schedule());
      run(complete(`s${t}`), submit(small(`f${t}`, 5_000)), schedule());
    }
    expect(aborts()).toEqual([['insufficient-resources', undefined], ['reserved', 'big']]);
    // big starts at its reserved time and takes every host: long finds no room, no other job is reserved, and that is news
    churn(g.cluster, 32, 5);
    expect(shardGet(g.cluster.state.jobs, 'big')?.status).toBe('running');
    expect(aborts().at(-1)).toEqual(['insufficient-resources', undefined]);
    expect(explain(g.cluster.state, 'long')!.text).toMatch(/is pending \(insufficient-resources/);
  });

  test('an identical request expected to run as long or longer is held back from the cache, without the allocator', () => {
    const g = given([...fourFull(), submit(big('big', 32)), schedule(), advance(1000), complete('s0'), submit(small('long1', 40_000)), submit(small('long2', 50_000)), submit(small('long3', 35_000))]);
    const o = g.when(schedule());
    const reasons = Object.fromEntries(of(o.events, 'GangAborted').map((a) => [a.jobId, a.reason]));
    expect(reasons['long1']).toMatchObject({ category: 'reserved', by: 'big' });
    expect(reasons['long1']?.cached).toBeUndefined();
    // same request, running longer: served from the session's cache, naming the job it would delay
    expect(reasons['long2']).toMatchObject({ category: 'reserved', by: 'big', cached: true });
    expect(reasons['long2']?.message).toMatch(/^an identical request \(job long1, .*expected to run no longer\) would delay job big/);
    // a shorter run is another question (it may end before the reservation starts): the allocator decides it
    expect(reasons['long3']).toMatchObject({ category: 'reserved', by: 'big' });
    expect(reasons['long3']?.cached).toBeUndefined();
  });

  test('a job held back stays so when the reserved job starts and another is reserved in its place', () => {
    const g = given([...fourFull(), submit(big('R1', 32)), submit(big('R2', 16)), schedule(), submit(small('X', 40_000)), schedule()]);
    const aborts = () => of(g.cluster.log.flat(), 'GangAborted').filter((e) => e.jobId === 'X').map((e) => [e.reason.category, e.reason.by]);
    g.cluster.run(advance(1000));
    g.cluster.run(complete('s0'));
    g.cluster.run(schedule());
    expect(aborts()).toEqual([['insufficient-resources', undefined], ['reserved', 'R1']]);
    churn(g.cluster, 32, 1);
    // R1 runs; R2 is reserved behind it; X still waits behind a reservation: nothing more about it
    expect(shardGet(g.cluster.state.jobs, 'R1')?.status).toBe('running');
    expect(shardGet(g.cluster.state.jobs, 'R2')?.reservation).toBeDefined();
    expect(aborts()).toEqual([['insufficient-resources', undefined], ['reserved', 'R1']]);
    expect(explain(g.cluster.state, 'X')!.text).toMatch(/held back: it would delay job R1, .*\(as first held back; R1 is no longer reserved, other reservations are\)/);
  });

  test('a job held back stays so when it comes before the reserved job in the order (shares changed) and finds no room', () => {
    // R (user big) and X (user x) tie at share 0: R, submitted first, is tried first and reserved
    const g = given([...fourFull(), submit({ ...job('R', { tasks: 32, user: 'big' }), runtimeLimitMs: 60_000 }), schedule(),
      submit({ ...job('X', { user: 'x' }), runtimeLimitMs: 40_000 }), schedule()]);
    const aborts = () => of(g.cluster.log.flat(), 'GangAborted').filter((e) => e.jobId === 'X').map((e) => [e.reason.category, e.reason.by]);
    const run = (...steps: Step[]) => steps.forEach((step) => g.cluster.run(step));
    // a slot frees: X fits only by delaying R; a short job of big's backfills it, so big's share rises above x's
    run(advance(1000), complete('s0'), submit({ ...job('b1', { user: 'big' }), runtimeLimitMs: 5_000 }), schedule());
    expect(shardGet(g.cluster.state.jobs, 'b1')?.status).toBe('running');
    expect(aborts()).toEqual([['insufficient-resources', undefined], ['reserved', 'R']]);
    // the next session tries X before R, with no room: R's reservation still stands, nothing is written
    run(advance(1000), submit({ ...job('z', { tasks: 64, user: 'z' }) }), schedule());
    expect(aborts()).toEqual([['insufficient-resources', undefined], ['reserved', 'R']]);
    // X, short of resources and first, took the one reservation (reserveDepth 1) and R lost it: once
    // R's reservation is gone, X finding no room is news
    expect(shardGet(g.cluster.state.jobs, 'X')?.reservation).toBeDefined();
    expect(shardGet(g.cluster.state.jobs, 'R')?.reservation).toBeUndefined();
    run(advance(1000), submit({ ...job('z2', { tasks: 64, user: 'z' }) }), schedule());
    expect(aborts()).toEqual([['insufficient-resources', undefined], ['reserved', 'R'], ['insufficient-resources', undefined]]);
  });

  test('reserveDepth 2 reserves the first two blocked jobs, each on the timeline the first leaves', () => {
    const g = given([policy({ reserveDepth: 2 }), ...fourFull(), submit(big('a', 32)), submit(big('b', 16, { priority: 90 })), schedule()]);
    const reserved = of(g.cluster.log.flat(), 'GangReserved') as GangReserved[];
    expect(reserved.map((r) => [r.jobId, r.startAt])).toEqual([['a', 32_000], ['b', 92_000]]);
  });
});

describe('runtime limits', () => {
  test('the first session at or after commit + runtimeLimitMs stops the gang, whole, with Stops for its nodes', () => {
    const g = given([register(slotNode('n1', 2)), register(slotNode('n2', 2)), submit({ ...job('j', { tasks: 3 }), runtimeLimitMs: 5_000 }), schedule()]);
    expect(g.when(advance(4_999)).when(schedule()).events).toEqual([]);
    const o = g.when(advance(1)).when(schedule());
    const released = of(o.events, 'AllocationReleased');
    expect(released.every((r) => r.cause === 'runtime-limit')).toBe(true);
    expect(released.flatMap((r) => r.members).sort()).toEqual([0, 1, 2]);
    expect(o.aborts).toEqual([expect.objectContaining({ jobId: 'j', final: true, reason: expect.objectContaining({ category: 'runtime-limit' }) })]);
    expect(shardGet(o.state.jobs, 'j')?.status).toBe('runtime-limit');
    const stops = g.cluster.transactions.slice(-1).flatMap((t) => decisionMessages(t.seq, t.tx, (id) => shardGet(o.state.jobs, id))).filter((m) => m.subject.startsWith('muster.stop.'));
    expect(stops.map((m) => m.subject).sort()).toEqual(['muster.stop.n1', 'muster.stop.n2']);
    expect(o.state.nodes.flat(3).every((n) => n === null || n.used.slots === 0)).toBe(true);
  });

  test('a due limit makes a session needed, and an idle cluster with no limit due writes nothing', () => {
    const g = given([register(slotNode('n1', 1)), submit({ ...job('j'), runtimeLimitMs: 1_000 }), schedule()]);
    expect(g.when(schedule(999)).events).toEqual([]);
    expect(g.when(schedule(1_000)).aborts.map((a) => a.reason.category)).toEqual(['runtime-limit']);
    expect(g.when(schedule(5_000)).events).toEqual([]);
  });

  test('a limit the leader holds back (dueBy: a completion stored before it not yet ingested) does not stop the gang, and the session says so', () => {
    const g = given([register(slotNode('n1', 1)), submit({ ...job('j'), runtimeLimitMs: 1_000 }), schedule(), advance(1_500)]);
    // only the held limit asked for a session: none runs
    expect(g.when(scheduleDueBy(900)).events).toEqual([]);
    // with something else to do, the session runs and writes the time deadlines fell due by
    const o = g.when(submit(job('other'))).when(scheduleDueBy(900));
    expect(o.aborts.filter((a) => a.jobId === 'j')).toEqual([]);
    expect(o.events[0]).toEqual({ type: 'SessionStarted', session: expect.any(Number), at: 1_500, dueBy: 900 });
    expect(shardGet(o.state.jobs, 'j')?.status).toBe('running');
    // the completion, once ingested, finishes the gang: it is not stopped at its limit
    const finished = g.when(done('n1', 'j', 0)).when(schedule());
    expect(finished.aborts.filter((a) => a.jobId === 'j')).toEqual([]);
    expect(shardGet(finished.state.jobs, 'j')?.status).toBe('succeeded');
  });

  test('a limit due by dueBy stops the gang as before, and a session that held nothing back writes no dueBy', () => {
    const g = given([register(slotNode('n1', 1)), submit({ ...job('j'), runtimeLimitMs: 1_000 }), schedule(), advance(1_500)]);
    const o = g.when(scheduleDueBy(1_200));
    expect(o.aborts.map((a) => a.reason.category)).toEqual(['runtime-limit']);
    expect(o.events[0]).toEqual({ type: 'SessionStarted', session: expect.any(Number), at: 1_500 });
  });

  test('a pending job\'s timeout is held back by dueBy too', () => {
    const g = given([register(slotNode('n1', 1)), submit({ ...job('big', { tasks: 2 }), timeoutMs: 1_000 }), schedule(), advance(1_500)]);
    expect(g.when(submit(job('other', { tasks: 2 }))).when(scheduleDueBy(999)).aborts.filter((a) => a.reason.category === 'timeout')).toEqual([]);
    expect(g.when(scheduleDueBy(1_000)).aborts.filter((a) => a.reason.category === 'timeout').map((a) => a.jobId)).toEqual(['big']);
  });
});

describe('bad input', () => {
  test.each([
    ['a negative runtimeLimitMs', { runtimeLimitMs: -1 }],
    ['a non-integer runtimeLimitMs', { runtimeLimitMs: 1.5 }],
    ['a zero runtimeLimitMs', { runtimeLimitMs: 0 }],
  ])('%s is rejected with its path, nothing applied', (_what, extra) => {
    const o = given([register(slotNode('n1', 1))]).when(submit({ ...job('j'), ...extra }));
    expect(o.events).toEqual([expect.objectContaining({ type: 'JobRejected', reason: expect.objectContaining({ category: 'invalid', path: 'runtimeLimitMs' }) })]);
    expect(shardGet(o.state.jobs, 'j')).toBeUndefined();
  });

  test.each([
    ['an unknown policy field', { reserveDepth: 1, backfill: true }, 'backfill'],
    ['a negative reserveDepth', { reserveDepth: -1 }, 'reserveDepth'],
    ['a zero assumedRuntimeMs', { assumedRuntimeMs: 0 }, 'assumedRuntimeMs'],
  ])('%s is rejected with its path, the policy in force stays', (_what, spec, path) => {
    const o = given([]).when(policy(spec));
    expect(o.events).toEqual([expect.objectContaining({ type: 'InputRejected', reason: expect.objectContaining({ category: 'invalid', path }) })]);
    expect(o.state.policy).toEqual({ reserveDepth: 1, assumedRuntimeMs: 86_400_000 });
  });

  test('a policy names only what it changes', () => {
    const o = given([policy({ reserveDepth: 4 })]).when(policy({ assumedRuntimeMs: 1_000 }));
    expect(o.state.policy).toEqual({ reserveDepth: 4, assumedRuntimeMs: 1_000 });
  });
});
