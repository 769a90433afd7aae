import { describe, expect, test } from 'vitest';
import { decisionMessages, explain, shardGet, unsatisfiableKey } from '@muster/core';
import type { BindMessage, GangAborted, GangCommitted, GangReserved, JobRejected, SchedulerEvent } from '@muster/core';
import { alternativesJob, job, node, slotNode } from '@muster/core/testing';
import type { JobOptions } from '@muster/core/testing';
import { Cluster, advance, close, complete, given, lose, queue, register, schedule, submit } from '@muster/core/testing';
import type { Outcome, Step } from '@muster/core/testing';
import { invariantViolations, releaseViolations } from '@muster/core/testing';

// DESIGN.md §13, contract v1.1: alternative requests, through the real ingest and session. Each
// test is built so that it fails if only the first variant were checked (the LSF-style reference's
// alternative path never checked a nested request for real availability).

const of = <T extends SchedulerEvent['type']>(events: readonly SchedulerEvent[], type: T) => events.filter((e): e is Extract<SchedulerEvent, { type: T }> => e.type === type);
const membersOf = (c: GangCommitted): number => c.allocations.reduce((n, a) => n + a.members.length, 0);
const clean = (o: Outcome): void => {
  expect(invariantViolations(o.state)).toEqual([]);
};

/** 8 members of one A100 each, or 4 of one H100 each. */
const a100s: JobOptions = { tasks: 8, gpus: 1, select: "gpu_model == 'A100'" };
const h100s: JobOptions = { roles: [{ name: 'small', count: 4, gpus: 1, cpu: 500, memoryMb: 512 }], select: "gpu_model == 'H100'" };
const eightOrFour = (id: string, o: JobOptions = {}): Record<string, unknown> => alternativesJob(id, [a100s, h100s], o);

/** One A100 host of 8 devices with 4 taken, one H100 host of 4: 8 A100s do not fit now, 4 H100s do. */
function halfBusy(): Step[] {
  return [
    register(node('a1', { gpus: 8, model: 'A100', labels: { gpu_model: 'A100' } })),
    register(node('h1', { gpus: 4, model: 'H100', labels: { gpu_model: 'H100' } })),
    submit(job('x', { tasks: 4, gpus: 1, user: 'other', select: "gpu_model == 'A100'" })),
    schedule(),
  ];
}

describe('an attempt tries the variants in order and commits the first that fits', () => {
  test('a job with two alternatives commits on the second when the first cannot fit now, with alternative: 1', () => {
    given(halfBusy()).when(submit(eightOrFour('g'))).when(schedule()).then((o) => {
      expect(o.commits).toHaveLength(1);
      const c = o.commits[0]!;
      expect(c.alternative).toBe(1);
      // the second variant's gang, on the H100 host: its role, size and resources
      expect(c.allocations).toEqual([{ node: 'h1', role: 'small', members: [0, 1, 2, 3], gpuIds: [0, 1, 2, 3], resources: { cpu: 2000, memoryMb: 2048, gpus: 4 } }]);
      const g = shardGet(o.state.jobs, 'g')!;
      expect(g.alternative).toBe(1);
      expect(g.members).toHaveLength(4);
      expect(explain(o.state, 'g')!.text).toContain('with alternative 1');
      clean(o);
    });
  });

  test('when the first fits, it commits (alternative: 0), even where the second would fit too', () => {
    const steps = [register(node('a1', { gpus: 8, labels: { gpu_model: 'A100' } })), register(node('h1', { gpus: 4, labels: { gpu_model: 'H100' } }))];
    given(steps).when(submit(eightOrFour('g'))).when(schedule()).then((o) => {
      expect(o.commits[0]!.alternative).toBe(0);
      expect(membersOf(o.commits[0]!)).toBe(8);
      expect(o.commits[0]!.allocations.map((a) => a.node)).toEqual(['a1']);
    });
  });

  test('a job without alternatives commits as it always did: no alternative field', () => {
    given(halfBusy()).when(submit(job('p', { tasks: 2 }))).when(schedule()).then((o) => {
      expect(o.commits[0]).not.toHaveProperty('alternative');
      expect(shardGet(o.state.jobs, 'p')).not.toHaveProperty('alternative');
      expect(shardGet(o.state.jobs, 'p')).not.toHaveProperty('fingerprints');
    });
  });

  test('the binds carry the committed variant\'s role and command; members release exactly what the variant took', () => {
    const withCommand = alternativesJob('g', [{ ...a100s }, { ...h100s }]);
    ((withCommand.alternatives as Record<string, unknown>[])[1]!.roles as Record<string, unknown>[])[0]!.command = ['run-small', '--fast'];
    const g = given(halfBusy());
    const o = g.when(submit(withCommand)).when(schedule());
    const tx = g.cluster.transactions.at(-1)!;
    const binds = decisionMessages(tx.seq, tx.tx, (id) => shardGet(o.state.jobs, id)).filter((m) => m.subject.startsWith('muster.bind.'));
    expect(binds.map((b) => b.subject)).toEqual(['muster.bind.h1']);
    expect((binds[0]!.payload as BindMessage).parts).toEqual([expect.objectContaining({ role: 'small', members: [0, 1, 2, 3], command: ['run-small', '--fast'] })]);
    const done = o.when(complete('g')).when(complete('x'));
    expect(shardGet(done.state.jobs, 'g')!.status).toBe('succeeded');
    expect(releaseViolations(done.state)).toEqual([]);
    clean(done);
  });

  test('a node lost under it requeues it with no variant in force; the next session places it again', () => {
    const g = given([...halfBusy(), submit(eightOrFour('g')), schedule()]);
    const lost = g.when(lose('h1'));
    const j = shardGet(lost.state.jobs, 'g')!;
    expect(j.status).toBe('pending');
    expect(j).not.toHaveProperty('alternative');
    expect(j.members).toEqual([]);
    clean(lost);
    // x done: the A100 host is free, so the first variant fits now
    const again = lost.when(complete('x')).when(schedule());
    expect(again.commits.map((c) => [c.jobId, c.alternative])).toEqual([['g', 0]]);
    expect(shardGet(again.state.jobs, 'g')!.members).toHaveLength(8);
    clean(again);
  });
});

describe('the unsatisfiable cache keys each variant', () => {
  test('a second identical job in the same session skips the variant that failed; a third, with both failed, is pended from the cache', () => {
    const g = given([...halfBusy(), submit(eightOrFour('g1')), submit(eightOrFour('g2')), submit(eightOrFour('g3'))]);
    const o = g.when(schedule());
    expect(o.commits.map((c) => [c.jobId, c.alternative])).toEqual([['g1', 1]]);
    const [second, third] = o.aborts as [GangAborted, GangAborted];
    // g2: the first variant from the cache (g1 found it insufficient), the second run and found full
    expect(second.jobId).toBe('g2');
    expect(second.reason).toMatchObject({ category: 'insufficient-resources', alternatives: [{ category: 'insufficient-resources', cached: true }, { category: 'insufficient-resources' }] });
    expect(second.reason.cached).toBeUndefined();
    expect(second.reason.alternatives![1]).not.toHaveProperty('cached');
    // g3: every variant a cache hit: cached, and no allocator ran for it
    expect(third.jobId).toBe('g3');
    expect(third.reason).toMatchObject({ category: 'insufficient-resources', cached: true, alternatives: [{ cached: true }, { cached: true }] });
    // g1 ran two searches, g2 one, g3 none
    expect(g.cluster.lastStats).toMatchObject({ allocatorRuns: 3, cacheHits: 3, committed: 1, failed: 1 });
    // the state's copy keys what a written abort found under each variant's own fingerprint: g2's
    // second variant (its first came from the cache; g1's failure of it wrote nothing, as g1 committed)
    const fingerprints = shardGet(o.state.jobs, 'g2')!.fingerprints!;
    expect(fingerprints).toHaveLength(2);
    expect(new Set(fingerprints).size).toBe(2);
    expect(o.state.unsatisfiable).toEqual({ [unsatisfiableKey(fingerprints[1]!, { user: 'alice', queue: 'default', project: 'p1' })]: 'insufficient-resources' });
    clean(o);
  });

  test('a variant shares its cache entry with a plain job asking for the same request', () => {
    // p (plain, the first variant's request) fails first: g's first variant is then a cache hit
    const g = given([...halfBusy(), submit(job('p', a100s)), submit(eightOrFour('g'))]);
    const o = g.when(schedule());
    expect(o.commits.map((c) => [c.jobId, c.alternative])).toEqual([['g', 1]]);
    expect(g.cluster.lastStats).toMatchObject({ allocatorRuns: 2, cacheHits: 0 });
  });
});

describe('the category of a failed attempt is the closest variant\'s', () => {
  const cluster = (): Step[] => [
    register(node('a1', { gpus: 8, labels: { gpu_model: 'A100' } })),
    submit(job('x', { tasks: 8, gpus: 1, user: 'other' })),
    schedule(),
  ];
  const nowhere: JobOptions = { tasks: 1, select: "gpu_model == 'TPU'" };
  const never: JobOptions = { tasks: 9, gpus: 1, policy: 'same-node' };
  const later: JobOptions = { tasks: 2, gpus: 1 };
  test.each<[string, JobOptions[], string]>([
    ['no matching hosts, then no plan on the empty cluster', [nowhere, never], 'placement-unsatisfiable'],
    ['no plan on the empty cluster, then short of resources now', [never, later], 'insufficient-resources'],
    ['short of resources, then no matching hosts', [later, nowhere], 'insufficient-resources'],
    ['no matching hosts twice', [nowhere, { ...nowhere, select: "gpu_model == 'H100'" }], 'no-matching-hosts'],
    ['three variants, the last short of resources', [nowhere, never, later], 'insufficient-resources'],
  ])('%s: %s', (_name, variants, category) => {
    given(cluster()).when(submit(alternativesJob('g', variants))).when(schedule()).then((o) => {
      expect(o.commits).toHaveLength(0);
      expect(o.events.filter((e) => e.type === 'HostDebited' && e.jobId === 'g')).toEqual([]);
      const reason = o.aborts.find((a) => a.jobId === 'g')!.reason;
      expect(reason.category).toBe(category);
      expect(reason.alternatives).toHaveLength(variants.length);
      expect(reason.message).toMatch(/^no alternative fits: alternative 0: /);
      clean(o);
    });
  });

  test('quota where a queue\'s max is what stops the closest variant; short of resources beats it', () => {
    const steps = [queue({ name: 'q', max: { gpus: 4 } }), register(node('a1', { gpus: 8 }))];
    const overMax: JobOptions = { tasks: 6, gpus: 1, queue: 'q' };
    given(steps).when(submit(alternativesJob('g', [overMax, { tasks: 1, select: "zone == 'x'" }], { queue: 'q' }))).when(schedule()).then((o) => {
      expect(o.aborts[0]!.reason).toMatchObject({ category: 'quota', alternatives: [{ category: 'quota' }, { category: 'no-matching-hosts' }] });
      expect(o.aborts[0]!.reason.message).toContain('queue q: gpus in use 0 plus this gang\'s 6 would pass its max of 4');
    });
    // and the second variant within the max commits
    given(steps).when(submit(alternativesJob('g', [overMax, { tasks: 3, gpus: 1 }], { queue: 'q' }))).when(schedule()).then((o) => {
      expect(o.commits.map((c) => c.alternative)).toEqual([1]);
    });
  });

  test('reserved where only a reservation stops the closest variant', () => {
    // four full 8-slot hosts; a 32-member gang reserved at 32 s; one slot frees at 1 s
    const steps: Step[] = [
      ...[1, 2, 3, 4].map((i) => register(slotNode(`h${i}`, 8))),
      ...Array.from({ length: 32 }, (_, i) => submit({ ...job(`s${i}`, { user: 'many' }), runtimeLimitMs: 32_000 })),
      schedule(),
      submit({ ...job('big', { tasks: 32, user: 'big', priority: 100 }), runtimeLimitMs: 60_000 }),
      schedule(),
      advance(1000),
      complete('s0'),
    ];
    const long = { ...alternativesJob('long', [{ tasks: 1 }, { tasks: 1, select: "zone == 'x'" }]), runtimeLimitMs: 40_000 };
    given(steps).when(submit(long)).when(schedule()).then((o) => {
      const reason = o.aborts.find((a) => a.jobId === 'long')!.reason;
      expect(reason).toMatchObject({ category: 'reserved', alternatives: [{ category: 'reserved' }, { category: 'no-matching-hosts' }] });
      expect(reason.message).toContain('would delay job big');
    });
  });

  test('explain counts hosts per variant', () => {
    const steps = [...cluster(), register(node('h1', { gpus: 4, labels: { gpu_model: 'H100' } })), submit(job('y', { tasks: 4, gpus: 1, select: "gpu_model == 'H100'", user: 'other' })), schedule()];
    given(steps).when(submit(eightOrFour('g'))).when(schedule()).then((o) => {
      const e = explain(o.state, 'g')!;
      expect(e.alternatives).toEqual([
        { alternative: 0, members: 8, category: 'insufficient-resources', hosts: { 'insufficient-cpu': 1, 'select-mismatch': 1 }, fit: 0, eligible: 1 },
        { alternative: 1, members: 4, category: 'insufficient-resources', hosts: { 'insufficient-gpu': 1, 'select-mismatch': 1 }, fit: 0, eligible: 1 },
      ]);
      expect(e.text).toContain("2 alternatives: alternative 0: 8 member(s); 0 of 1 matching hosts could take one 'task' member now");
      expect(e.text).toContain("alternative 1: 4 member(s); 0 of 1 matching hosts could take one 'small' member now");
    });
  });
});

describe('preemption with alternatives: only when no variant fits as things are, then over the variants in order', () => {
  // two teams guaranteed half the GPUs each; a borrows them all (4 hosts of 8 GPUs, ample CPU)
  const borrowed = (): Step[] => [
    ...[1, 2, 3, 4].map((i) => register(node(`h${i}`, { gpus: 8, cpu: 64_000, memoryMb: 512_000 }))),
    queue({ name: 'a', guaranteed: { gpus: 16 } }),
    queue({ name: 'b', guaranteed: { gpus: 16 } }),
    ...[1, 2, 3, 4].map((i) => submit(job(`a${i}`, { tasks: 8, gpus: 1, queue: 'a', user: 'a' }))),
    schedule(),
  ];
  const eightGpus: JobOptions = { tasks: 8, gpus: 1 };

  test('a later variant that fits without stopping anyone commits; nothing is preempted', () => {
    given(borrowed()).when(submit(alternativesJob('b1', [eightGpus, { tasks: 2 }], { queue: 'b', user: 'b' }))).when(schedule()).then((o) => {
      expect(o.commits.map((c) => [c.jobId, c.alternative])).toEqual([['b1', 1]]);
      expect(o.aborts.filter((a) => a.reason.category === 'preempted')).toEqual([]);
      clean(o);
    });
  });

  test('a later variant preempts when the first cannot be placed even so; the victims and the commit are one transaction', () => {
    given(borrowed()).when(submit(alternativesJob('b1', [{ tasks: 1, select: "zone == 'x'" }, eightGpus], { queue: 'b', user: 'b' }))).when(schedule()).then((o) => {
      const commit = o.commits.find((c) => c.jobId === 'b1')!;
      expect(commit.alternative).toBe(1);
      const tx = o.parts.find((part) => part.includes(commit))!;
      expect(tx.filter((e) => e.type === 'GangAborted' && e.reason.category === 'preempted').map((e) => (e as GangAborted).reason.by)).toEqual(['b1']);
      clean(o);
    });
  });
});

describe('a reservation plans the earliest start over all variants', () => {
  // host a (kind a) is held until 60 s, host b (kind b) until 30 s
  const steps = (bEndsMs: number): Step[] => [
    register(slotNode('a', 8, { labels: { kind: 'a' } })),
    register(slotNode('b', 8, { labels: { kind: 'b' } })),
    submit({ ...job('ra', { tasks: 8, select: "kind == 'a'", user: 'other' }), runtimeLimitMs: 60_000 }),
    submit({ ...job('rb', { tasks: 8, select: "kind == 'b'", user: 'other' }), runtimeLimitMs: bEndsMs }),
    schedule(),
  ];
  const either = (): Record<string, unknown> => ({ ...alternativesJob('g', [{ tasks: 8, select: "kind == 'a'" }, { tasks: 8, select: "kind == 'b'" }]), runtimeLimitMs: 10_000 });

  test('the second variant starts first: reserved on its hosts, and it commits there at that start', () => {
    const g = given(steps(30_000));
    const o = g.when(submit(either())).when(schedule());
    expect(of(o.events, 'GangReserved')).toEqual([expect.objectContaining({ jobId: 'g', startAt: 30_000, hosts: ['b'], alternative: 1 } satisfies Partial<GangReserved>)]);
    expect(shardGet(o.state.jobs, 'g')!.reservation).toMatchObject({ startAt: 30_000, alternative: 1 });
    g.cluster.run(advance(30_000));
    const at = g.when(complete('rb')).when(schedule());
    expect(at.commits.map((c) => [c.jobId, c.alternative, c.at])).toEqual([['g', 1, 30_000]]);
  });

  test('ties go to the first variant', () => {
    const o = given(steps(60_000)).when(submit(either())).when(schedule());
    expect(of(o.events, 'GangReserved')).toEqual([expect.objectContaining({ jobId: 'g', startAt: 60_000, hosts: ['a'], alternative: 0 })]);
  });
});

describe('minInstances with alternatives: 0 or one variant\'s size; the committed variant is kept warm', () => {
  test('kept warm at the committed variant\'s size, released on close', () => {
    const g = given(halfBusy());
    const o = g.when(submit(eightOrFour('g', { minInstances: 8 }))).when(schedule());
    expect(o.commits.map((c) => [c.alternative, membersOf(c)])).toEqual([[1, 4]]);
    const finished = o.when(complete('g'));
    // every member finished, and the gang still holds its host
    expect(shardGet(finished.state.jobs, 'g')!.status).toBe('running');
    expect(shardGet(finished.state.nodes, 'h1')!.gpusUsed).toEqual([0, 1, 2, 3]);
    const closed = finished.when(close('g')).when(complete('x'));
    expect(shardGet(closed.state.jobs, 'g')!.status).toBe('closed');
    expect(releaseViolations(closed.state)).toEqual([]);
  });

  test('bad input is rejected with its path, nothing applied', () => {
    const cluster = new Cluster();
    const reject = (body: unknown): JobRejected['reason'] => of(cluster.run(submit(body as Record<string, unknown>)).flat(), 'JobRejected')[0]!.reason;
    expect(reject(eightOrFour('m', { minInstances: 5 }))).toMatchObject({ category: 'invalid', path: 'minInstances' });
    expect(reject({ ...eightOrFour('r'), roles: [{ name: 'a', count: 1, resources: { cpu: 1, memoryMb: 1 } }] })).toMatchObject({ path: 'roles' });
    expect(reject(alternativesJob('one', [a100s]))).toMatchObject({ path: 'alternatives', message: 'alternatives: must have at least 2 items' });
    expect(reject(alternativesJob('nine', Array.from({ length: 9 }, () => a100s)))).toMatchObject({ path: 'alternatives', message: 'alternatives: must have at most 8 items' });
    expect(reject(alternativesJob('sel', [a100s, { ...h100s, select: "gpu_model == 'H100' &&" }]))).toMatchObject({ path: 'alternatives.1.select' });
    expect(shardGet(cluster.state.jobs, 'm')).toBeUndefined();
    expect(cluster.state.pending).toEqual(new Cluster().state.pending);
  });
});
