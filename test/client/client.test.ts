// The publisher SDK against a real nats-server: local validation, submission straight into
// MUSTER_IN with the contract's msg id, the API's answers and errors, and decisions for watchers
// that come after the decision was published.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInputs } from '@muster/bus';
import type { InputMessage } from '@muster/bus';
import { canonicalHash } from '@muster/core';
import type { Decision, GangResized } from '@muster/core';
import { MusterClient, isMusterError } from '@muster/client';
import type { JobDecision, MusterError } from '@muster/client';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

const spec = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  identity: { user: 'alice', queue: 'default', project: 'p' },
  tasks: 2,
  resources: { cpu: 500, memoryMb: 256 },
  ...extra,
});

const committed = (jobId: string, session: number): Decision => ({
  type: 'GangCommitted',
  jobId,
  session,
  at: 1_700_000_000_000 + session,
  allocations: [{ node: 'n1', role: 'task', members: [0, 1], gpuIds: [], resources: { cpu: 1000, memoryMb: 512, gpus: 0 } }],
});

const aborted = (jobId: string, session: number, final: boolean): Decision => ({
  type: 'GangAborted',
  jobId,
  session,
  at: 1_700_000_000_000 + session,
  final,
  reason: final
    ? { category: 'timeout', message: 'waited too long', hosts: {} }
    : { category: 'insufficient-resources', message: 'no room now', hosts: { 'insufficient-cpu': 3 } },
});

/** An elastic gang's resize (DESIGN.md §13): its whole allocation after, its size now, and who shrank it. */
const resized = (jobId: string, session: number, members: number, by?: string): GangResized => ({
  type: 'GangResized',
  jobId,
  session,
  at: 1_700_000_000_000 + session,
  allocations: [{ node: 'n1', role: 'task', members: Array.from({ length: members }, (_, i) => i), gpuIds: [], resources: { cpu: 500 * members, memoryMb: 256 * members, gpus: 0 } }],
  members,
  ...(by === undefined ? {} : { by }),
});

async function rejection(promise: Promise<unknown>): Promise<MusterError> {
  try {
    await promise;
  } catch (err) {
    if (isMusterError(err)) return err;
    throw err;
  }
  throw new Error('expected a MusterError');
}

describe('MusterClient on a real nats-server', () => {
  let bus: TestBus;
  let client: MusterClient;
  let decisionSeq = 0;

  const publishDecision = async (decision: Decision | GangResized): Promise<void> => {
    decisionSeq += 1;
    await bus.admin.publish(`muster.decision.${decision.jobId}`, JSON.stringify(decision), { msgId: `muster:${decisionSeq}:0` });
  };

  const inputs = async (subject: string): Promise<InputMessage[]> => {
    const all: InputMessage[] = [];
    for await (const input of readInputs(bus.bus)) if (input.subject === subject) all.push(input);
    return all;
  };

  beforeAll(async () => {
    bus = await startTestBus();
    client = new MusterClient(bus.bus, { timeoutMs: 1_000 });
  });

  afterAll(async () => {
    await bus?.stop();
  });

  it('rejects an invalid JobSpec locally, naming the field, and sends nothing', async () => {
    const err = await rejection(client.submit(spec('bad', { tasks: 0 })));
    expect(err.code).toBe('invalid');
    expect(err.path).toBe('tasks');
    expect(err.message).toContain('tasks');
    const typo = await rejection(client.submit({ ...spec('bad2'), priorty: 3 }));
    expect(typo).toMatchObject({ code: 'invalid', path: 'priorty' });
    expect(await inputs('muster.in.submit')).toHaveLength(0);
  });

  it('rejects a job id that cannot be a subject token for cancel, close and watch', async () => {
    expect(await rejection(client.cancel('a.b'))).toMatchObject({ code: 'invalid', path: 'jobId' });
    expect(await rejection(client.close('*'))).toMatchObject({ code: 'invalid', path: 'jobId' });
    expect(await rejection(client.wait('a b', { timeoutMs: 10 }))).toMatchObject({ code: 'invalid', path: 'jobId' });
  });

  it('with no scheduler answering, submits straight into MUSTER_IN under the contract msg id, once', async () => {
    const body = spec('queued');
    const first = await client.submit(body);
    const again = await client.submit(body);
    expect(again).toEqual(first);
    const stored = await inputs('muster.in.submit');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.seq).toBe(first.inputSeq);
    expect(stored[0]!.msgId).toBe(`queued:${canonicalHash(body).slice(0, 12)}`);
    expect(JSON.parse(stored[0]!.data)).toEqual(body);
    // a corrected spec under the same id is a new intent, not a duplicate
    const corrected = await client.submit({ ...body, tasks: 3 });
    expect(corrected.inputSeq).toBeGreaterThan(first.inputSeq);
  });

  it('says unavailable when only the API is asked and no scheduler answers', async () => {
    expect((await rejection(client.submit(spec('api-only'), { via: 'api' }))).code).toBe('unavailable');
    expect((await rejection(client.jobs())).code).toBe('unavailable');
  });

  it('publishes cancel and close as inputs with a {jobId} body', async () => {
    const cancel = await client.cancel('queued');
    const close = await client.close('queued');
    expect((await inputs('muster.in.cancel')).map((i) => [i.seq, JSON.parse(i.data)])).toEqual([[cancel.inputSeq, { jobId: 'queued' }]]);
    expect((await inputs('muster.in.close')).map((i) => [i.seq, JSON.parse(i.data)])).toEqual([[close.inputSeq, { jobId: 'queued' }]]);
  });

  it('setQueue validates locally (nothing sent for a bad spec) and publishes the normalised spec on muster.in.queue.<name>.set, every call', async () => {
    expect(await rejection(client.setQueue({ name: 'team-a', guaranteed: { gpus: -1 } }))).toMatchObject({ code: 'invalid', path: 'guaranteed.gpus' });
    expect(await rejection(client.setQueue({ name: 'team-a', limits: {} }))).toMatchObject({ code: 'invalid', path: 'limits' });
    expect(await rejection(client.setQueue({ name: 'a.b' }))).toMatchObject({ code: 'invalid', path: 'name' });
    expect(await inputs('muster.in.queue.team-a.set')).toEqual([]);
    const first = await client.setQueue({ name: 'team-a', guaranteed: { gpus: 4 } });
    await client.setQueue({ name: 'team-a', guaranteed: { gpus: 8 } });
    // back to the first spec inside the dedupe window: still a new input (a queue set is no one-off intent)
    const third = await client.setQueue({ name: 'team-a', guaranteed: { gpus: 4 } });
    const sent = await inputs('muster.in.queue.team-a.set');
    expect(sent.map((i) => i.seq)).toEqual([first.inputSeq, first.inputSeq + 1, third.inputSeq]);
    expect(first.name).toBe('team-a');
    expect(JSON.parse(sent[0]!.data)).toEqual({ name: 'team-a', weight: 1, guaranteed: { gpus: 4 }, max: {}, preemption: { withinQueue: 'never', reclaim: true } });
  });

  it('queues() reads muster.api.queues.list', async () => {
    const rows = [{ name: 'team-a', parent: null, leaf: true, weight: 1, guaranteed: { gpus: 4 }, max: {}, used: { cpu: 0, memoryMb: 0, gpus: 2 }, borrowed: { cpu: 0, memoryMb: 0, gpus: 0 }, pending: 1, running: 1, implicit: false }];
    const sub = bus.bus.serve('muster.api.queues.list', () => JSON.stringify({ ok: true, queues: rows, seq: 7 }));
    try {
      expect(await client.queues()).toEqual(rows);
    } finally {
      sub.unsubscribe();
    }
    expect((await rejection(client.queues())).code).toBe('unavailable');
  });

  it('reads the API answers and turns an error answer into a MusterError with code and path', async () => {
    const rows = [{ id: 'j1', status: 'pending', user: 'alice', queue: 'default', priority: 0, members: 2, nodes: [], reason: 'insufficient-resources' }];
    const sub = bus.bus.serve('muster.api.>', (msg) => {
      if (msg.subject === 'muster.api.jobs.list') return JSON.stringify({ ok: true, jobs: rows });
      if (msg.subject === 'muster.api.submit') return JSON.stringify({ ok: false, error: { code: 'duplicate', message: 'job dup was already accepted', path: 'id' } });
      if (msg.subject === 'muster.api.explain') return 'not json';
      return JSON.stringify({ ok: false, error: { code: 'not-found', message: 'unknown job nope', path: 'jobId' } });
    });
    try {
      expect(await client.jobs()).toEqual(rows);
      expect(await rejection(client.submit(spec('dup')))).toMatchObject({ code: 'duplicate', path: 'id', message: 'job dup was already accepted' });
      expect(await rejection(client.job('nope'))).toMatchObject({ code: 'not-found', path: 'jobId' });
      expect((await rejection(client.explain('x'))).code).toBe('bad-reply');
    } finally {
      sub.unsubscribe();
    }
  });

  it('lets a watcher that comes after the decision see it, in order, and ends after a final abort', async () => {
    await publishDecision(aborted('late', 1, false));
    await publishDecision(committed('other', 1));
    await publishDecision(aborted('late', 2, true));
    const seen: JobDecision[] = [];
    for await (const decision of client.watch('late')) seen.push(decision);
    expect(seen).toEqual([aborted('late', 1, false), aborted('late', 2, true)]);
  });

  it('wait() returns the decision that settles a job, passing non-final aborts to onDecision', async () => {
    await publishDecision(aborted('settle', 1, false));
    await publishDecision(committed('settle', 2));
    const onTheWay: JobDecision[] = [];
    const decision = await client.wait('settle', { timeoutMs: 5_000, onDecision: (d) => onTheWay.push(d) });
    expect(decision).toEqual(committed('settle', 2));
    expect(onTheWay).toEqual([aborted('settle', 1, false), committed('settle', 2)]);
  });

  it('watch() yields an elastic gang\'s resizes after its commit, grown and shrunk, in order', async () => {
    await publishDecision(committed('elastic', 1));
    await publishDecision(resized('elastic', 2, 4));
    await publishDecision(resized('elastic', 3, 2, 'urgent'));
    await publishDecision(aborted('elastic', 4, true));
    const seen: JobDecision[] = [];
    for await (const decision of client.watch('elastic')) seen.push(decision);
    expect(seen).toEqual([committed('elastic', 1), resized('elastic', 2, 4), resized('elastic', 3, 2, 'urgent'), aborted('elastic', 4, true)]);
  });

  it('a resize does not settle wait(): it goes to onDecision, and the wait goes on', async () => {
    await publishDecision(resized('grown', 3, 4));
    const onTheWay: JobDecision[] = [];
    expect((await rejection(client.wait('grown', { timeoutMs: 500, onDecision: (d) => onTheWay.push(d) }))).code).toBe('timeout');
    expect(onTheWay).toEqual([resized('grown', 3, 4)]);
  });

  it('wait() also sees a decision published while it waits', async () => {
    const waiting = client.wait('live', { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    await publishDecision(committed('live', 5));
    expect(await waiting).toEqual(committed('live', 5));
  });

  it('wait() gives up with a timeout error when nothing settles the job', async () => {
    await publishDecision(aborted('stuck', 1, false));
    const started = Date.now();
    expect((await rejection(client.wait('stuck', { timeoutMs: 300 }))).code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
