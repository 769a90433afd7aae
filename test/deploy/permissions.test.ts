// Every role of deploy/nats/accounts.conf against the real three-node cluster started from the
// committed configuration: what each user may do works, and each denial holds, observed as a user
// would (an error instead of an ack, and the stream unchanged).
import {
  DECISIONS_STREAM,
  IN_STREAM,
  LOG_STREAM,
  OUTPUT_STREAM,
  subjects,
  appendTransactions,
  ensureStreams,
  listSnapshots,
  openLeaderLease,
  publishDecisions,
  publishInput,
  publishOutput,
  readLog,
  readOutput,
  saveSnapshot,
  streamDefinitions,
  streamInfo,
  subjectMessages,
} from '@muster/bus';
import type { Bus } from '@muster/bus';
import { MusterClient } from '@muster/client';
import { transactionHash } from '@muster/core';
import type { Transaction } from '@muster/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { startDeployedCluster } from '../support/natsConfig.ts';
import type { DeployedCluster } from '../support/natsConfig.ts';

const DENIED = /Permissions Violation/;

let cluster: DeployedCluster;
const connections: { close(): Promise<void> }[] = [];
let admin: NatsAdmin;
let scheduler: Bus;
let decisionSeq = 0;

/** A user's bus (muster's operations), and a raw connection of the same user for what no operation sends. */
async function login(user: string): Promise<{ bus: Bus; raw: NatsAdmin }> {
  const bus = (await cluster.connectAs(user)).withTimeout(10_000);
  const raw = await NatsAdmin.connect(cluster.urls, cluster.credentials(user));
  connections.push(bus, raw);
  return { bus, raw };
}

async function messages(stream: string): Promise<number> {
  return (await admin.streamInfo(stream)).state.messages;
}

/** The leader's next transaction after the log's current end (event-less, chained). */
async function nextTransaction(): Promise<{ tx: Transaction; lastSeq: number }> {
  const lastSeq = (await admin.streamInfo(LOG_STREAM)).state.last_seq;
  let prev: string | null = null;
  for await (const logged of readLog(scheduler)) prev = transactionHash(logged.tx);
  const tx: Transaction = { v: 1, kind: 'fact', term: 1, leader: 's1', at: lastSeq + 1, prev, session: 0, part: 1, parts: 1, events: [] };
  return { tx, lastSeq };
}

/** Publishes decision messages as the leader does (msg id, log seq header). */
async function publishAsLeader(subject: string, payload: unknown): Promise<void> {
  decisionSeq += 1;
  const result = await publishDecisions(scheduler, [{ subject, payload, msgId: `muster:${decisionSeq}:0`, logSeq: decisionSeq }]);
  expect(result.ok).toBe(true);
}

async function firstMessage(bus: Bus, filter: string): Promise<{ subject: string; body: unknown }> {
  for await (const m of subjectMessages(bus, DECISIONS_STREAM, filter)) return { subject: m.subject, body: JSON.parse(new TextDecoder().decode(m.data)) };
  throw new Error(`no message on ${filter}`);
}

/** A plain JetStream publish, as any client could send it (the SDK's own checks left aside). */
function publishJson(raw: NatsAdmin, subject: string, body: unknown): Promise<unknown> {
  return raw.publish(subject, JSON.stringify(body));
}

async function readDenied(bus: Bus, filter: string): Promise<void> {
  await expect(subjectMessages(bus, DECISIONS_STREAM, filter).next()).rejects.toThrow(DENIED);
}

/**
 * Publishes `beats` on `bus` every 100 ms until the scheduler user hears the last one (its interest
 * takes a moment to cross the cluster's routes); returns every heartbeat subject it heard.
 */
async function beatsHeard(bus: Bus, beats: string[]): Promise<string[]> {
  const heard: string[] = [];
  const hb = scheduler.subscribe('muster.hb.*', (m) => {
    heard.push(m.subject);
  });
  await scheduler.flush();
  try {
    await expect
      .poll(() => {
        for (const subject of beats) bus.publish(subject, '{}');
        return heard;
      }, { timeout: 15_000, interval: 100 })
      .toContain(beats[beats.length - 1]);
    return heard;
  } finally {
    hb.unsubscribe();
  }
}

async function subscribeDenied(raw: NatsAdmin, subject: string): Promise<void> {
  await expect(raw.firstOn(subject)).rejects.toThrow(DENIED);
}

const spec = (id: string): unknown => ({
  id,
  identity: { user: 'alice', queue: 'default', project: 'p1' },
  tasks: 1,
  resources: { cpu: 100, memoryMb: 64 },
});

beforeAll(async () => {
  cluster = await startDeployedCluster();
  ({ bus: scheduler } = await login('scheduler'));
  await ensureStreams(scheduler, { replicas: 3 });
  ({ raw: admin } = await login('admin'));
}, 120_000);

afterAll(async () => {
  try {
    await Promise.all(connections.map((c) => c.close()));
  } finally {
    await cluster?.stop();
  }
});

describe('scheduler', () => {
  it('creates and updates the streams, the lease bucket and the snapshot store with three replicas', async () => {
    expect((await ensureStreams(scheduler, { replicas: 3 })).map((r) => r.action)).toEqual(streamDefinitions.map(() => 'unchanged'));
    const changed = streamDefinitions.map((d) => (d.config.name === IN_STREAM ? { ...d, config: { ...d.config, description: 'changed' } } : d));
    const updated = await ensureStreams(scheduler, { replicas: 3, definitions: changed });
    expect(updated.find((r) => r.name === IN_STREAM)?.action).toBe('updated');
    for (const def of streamDefinitions) {
      const info = await admin.streamInfo(def.config.name);
      expect(info.config.num_replicas, def.config.name).toBe(3);
      expect(info.cluster?.replicas ?? [], def.config.name).toHaveLength(2);
    }
  });

  it('appends to the log, holds the lease, forwards submissions, publishes decisions and saves snapshots', async () => {
    const { tx, lastSeq } = await nextTransaction();
    expect(await appendTransactions(scheduler, [tx], lastSeq)).toEqual({ ok: true, seqs: [lastSeq + 1] });
    const lease = await openLeaderLease(scheduler);
    const taken = await lease.createLease('s1', 1);
    expect(taken.ok).toBe(true);
    if (taken.ok) expect((await lease.updateLease(taken.revision, { id: 's1', term: 1 })).ok).toBe(true);
    // muster.api.submit forwards a validated submission into MUSTER_IN
    expect((await publishInput(scheduler, 'muster.in.submit', spec('sched-1'), 'sched-1:forwarded')).seq).toBeGreaterThan(0);
    await publishAsLeader('muster.decision.sched-1', { type: 'GangCommitted', jobId: 'sched-1', session: 1, at: 1, allocations: [] });
    // a second save into a single slot overwrites: the object store purges the old chunks
    for (const seq of [1, 2]) await saveSnapshot(scheduler, { schema: 1, seq, hash: `h${seq}`, state: { seq } }, { keep: 1 });
    expect((await listSnapshots(scheduler)).map((s) => s.seq)).toEqual([2]);
  });

  it('cannot delete or purge the muster streams, nor delete a message', async () => {
    const streams = [IN_STREAM, LOG_STREAM, DECISIONS_STREAM];
    const before = await Promise.all(streams.map(messages));
    for (const subject of ['STREAM.DELETE', 'STREAM.PURGE', 'STREAM.MSG.DELETE'].flatMap((op) => streams.map((s) => `$JS.API.${op}.${s}`))) {
      await expect(scheduler.request(subject, '{"seq":1}', { timeoutMs: 10_000 }), subject).rejects.toThrow(DENIED);
    }
    expect(await Promise.all(streams.map(messages))).toEqual(before);
  });
});

describe('submitter', () => {
  it('submits, cancels and closes jobs through JetStream and gets acks', async () => {
    const { bus } = await login('submitter');
    const client = new MusterClient(bus, { timeoutMs: 10_000 });
    const before = await messages(IN_STREAM);
    const submitted = await client.submit(spec('sub-1'), { via: 'stream' });
    expect(submitted.inputSeq).toBeGreaterThan(0);
    expect((await client.cancel('sub-1')).inputSeq).toBe(submitted.inputSeq + 1);
    expect((await client.close('sub-1')).inputSeq).toBe(submitted.inputSeq + 2);
    expect(await messages(IN_STREAM)).toBe(before + 3);
  });

  it('asks the scheduler API and gets its answer', async () => {
    const served = scheduler.serve('muster.api.jobs.list', () => JSON.stringify({ ok: true, jobs: [{ id: 'api-1' }] }));
    await scheduler.flush();
    const client = new MusterClient((await login('submitter')).bus, { timeoutMs: 10_000 });
    // asked again until the responder's interest has reached the submitter's server
    await expect.poll(() => client.jobs().catch((err: unknown) => err), { timeout: 15_000, interval: 100 }).toEqual([{ id: 'api-1' }]);
    served.unsubscribe();
  });

  it('watches a job\'s decisions, including one published before it came', async () => {
    await publishAsLeader('muster.decision.watch-1', { type: 'GangAborted', jobId: 'watch-1', session: 1, at: 2, final: true, reason: { category: 'cancelled', message: 'cancelled' } });
    const client = new MusterClient((await login('submitter')).bus, { timeoutMs: 10_000 });
    const seen = [];
    for await (const decision of client.watch('watch-1')) seen.push(decision);
    expect(seen).toEqual([expect.objectContaining({ type: 'GangAborted', jobId: 'watch-1', final: true })]);
  });

  it('cannot append a forged GangCommitted to the log', async () => {
    const { raw } = await login('submitter');
    const { tx, lastSeq } = await nextTransaction();
    const forged = { ...tx, kind: 'session', events: [{ type: 'GangCommitted', jobId: 'forged', session: 9, at: 9, allocations: [{ node: 'n1', role: 'task', members: [0], gpuIds: [], resources: { cpu: 1, memoryMb: 1 } }] }] };
    await expect(raw.publish(subjects.log, JSON.stringify(forged), { expectLastSeq: lastSeq })).rejects.toThrow(DENIED);
    expect((await admin.streamInfo(LOG_STREAM)).state.last_seq).toBe(lastSeq);
    // the leader's fenced append after the attempt still lands where it expects
    expect(await appendTransactions(scheduler, [tx], lastSeq)).toEqual({ ok: true, seqs: [lastSeq + 1] });
  });

  it('cannot report for a node, set the scheduling policy or a queue, nor publish decisions, binds or stops', async () => {
    const { raw } = await login('submitter');
    const [inBefore, decisionsBefore] = [await messages(IN_STREAM), await messages(DECISIONS_STREAM)];
    for (const subject of ['muster.in.node.n1.done', 'muster.in.node.n1.register', 'muster.in.policy', 'muster.in.queue.team-a.set', 'muster.decision.sub-2', 'muster.bind.n1', 'muster.stop.n1']) {
      await expect(publishJson(raw, subject, { jobId: 'sub-2' }), subject).rejects.toThrow(DENIED);
    }
    expect(await messages(IN_STREAM)).toBe(inBefore);
    expect(await messages(DECISIONS_STREAM)).toBe(decisionsBefore);
  });

  it('cannot read binds, the log or the inputs', async () => {
    const { bus, raw } = await login('submitter');
    await readDenied(bus, 'muster.bind.n1');
    await expect(raw.request(`$JS.API.CONSUMER.CREATE.${LOG_STREAM}`, '{}', { timeoutMs: 10_000 })).rejects.toThrow(DENIED);
    await expect(raw.request(`$JS.API.STREAM.MSG.GET.${IN_STREAM}`, '{"seq":1}', { timeoutMs: 10_000 })).rejects.toThrow(DENIED);
  });

  it('cannot delete or purge streams, nor delete messages', async () => {
    const { raw } = await login('submitter');
    for (const subject of ['STREAM.DELETE', 'STREAM.PURGE', 'STREAM.MSG.DELETE'].flatMap((op) => [IN_STREAM, LOG_STREAM, DECISIONS_STREAM].map((s) => `$JS.API.${op}.${s}`))) {
      await expect(raw.request(subject, '{"seq":1}', { timeoutMs: 10_000 }), subject).rejects.toThrow(DENIED);
    }
    expect((await admin.streamInfo(LOG_STREAM)).state.first_seq).toBe(1);
  });

  it('cannot listen to other users\' replies nor to stored subjects', async () => {
    const { raw } = await login('submitter');
    for (const subject of ['_INBOX.>', '_INBOX_agent-n1.>', 'muster.log.>', 'muster.bind.n1', 'muster.hb.*']) await subscribeDenied(raw, subject);
  });
});

describe('agent n1', () => {
  it('registers and reports for its own node, and its heartbeats reach the scheduler', async () => {
    const { bus } = await login('agent-n1');
    const before = await messages(IN_STREAM);
    const node = { id: 'n1', labels: {}, capacity: { cpu: 1000, memoryMb: 1024 }, gpus: [] };
    expect((await publishInput(bus, 'muster.in.node.n1.register', node, 'n1:register:b:1')).seq).toBeGreaterThan(0);
    expect((await publishInput(bus, 'muster.in.node.n1.done', { jobId: 'j1', member: 0, ok: true }, 'n1:done:b:2')).seq).toBeGreaterThan(0);
    expect(await messages(IN_STREAM)).toBe(before + 2);

    // publishes on one connection arrive in order, so once n1's beat is heard, an n2 beat sent
    // before it would have been too
    const heard = await beatsHeard(bus, ['muster.hb.n2', 'muster.hb.n1']);
    expect(new Set(heard)).toEqual(new Set(['muster.hb.n1']));
  });

  it('cannot report for another node, submit jobs or write the log', async () => {
    const { raw } = await login('agent-n1');
    const [inBefore, logBefore] = [await messages(IN_STREAM), await messages(LOG_STREAM)];
    for (const subject of ['muster.in.node.n2.done', 'muster.in.node.n2.register', 'muster.in.submit', 'muster.in.cancel', 'muster.in.policy', 'muster.in.queue.team-a.set', subjects.log, 'muster.bind.n1']) {
      await expect(publishJson(raw, subject, { jobId: 'j1', member: 0, ok: true }), subject).rejects.toThrow(DENIED);
    }
    expect(await messages(IN_STREAM)).toBe(inBefore);
    expect(await messages(LOG_STREAM)).toBe(logBefore);
  });

  it('reads its own binds and stops, and not another node\'s', async () => {
    await publishAsLeader('muster.bind.n2', { type: 'Bind', jobId: 'b-2', session: 1, at: 3, parts: [] });
    await publishAsLeader('muster.bind.n1', { type: 'Bind', jobId: 'b-1', session: 1, at: 3, parts: [] });
    await publishAsLeader('muster.stop.n1', { type: 'Stop', jobId: 'b-1', members: [0], reason: 'cancel' });
    const { bus, raw } = await login('agent-n1');
    expect(await firstMessage(bus, 'muster.bind.n1')).toEqual({ subject: 'muster.bind.n1', body: expect.objectContaining({ jobId: 'b-1' }) });
    expect(await firstMessage(bus, 'muster.stop.n1')).toEqual({ subject: 'muster.stop.n1', body: expect.objectContaining({ jobId: 'b-1' }) });
    for (const filter of ['muster.bind.n2', 'muster.stop.n2', 'muster.bind.*', 'muster.>']) await readDenied(bus, filter);
    // nor by reading another agent's replies
    await subscribeDenied(raw, '_INBOX_agent-n2.>');
  });

  it("publishes its own node's output lines, not another node's, and cannot read output", async () => {
    const { bus, raw } = await login('agent-n1');
    const batch = new TextEncoder().encode(JSON.stringify({ attempt: 0, stream: 'stdout', lines: ['hello from n1'] }));
    expect((await publishOutput(bus, subjects.output('n1', 'out-1', 0), batch)).seq).toBeGreaterThan(0);
    const before = await messages(OUTPUT_STREAM);
    await expect(publishJson(raw, subjects.output('n2', 'out-1', 1), { attempt: 0, stream: 'stdout', lines: ['forged'] })).rejects.toThrow(DENIED);
    expect(await messages(OUTPUT_STREAM)).toBe(before);
    await expect(readOutput(bus, 'out-1').next()).rejects.toThrow(DENIED);
    // a submitter (what `muster logs` runs as) reads it
    const reader = (await login('submitter')).bus;
    const lines = [];
    for await (const m of readOutput(reader, 'out-1')) lines.push(m.subject);
    expect(lines).toEqual(['muster.out.n1.out-1.0']);
    await expect(publishJson((await login('submitter')).raw, subjects.output('n1', 'out-1', 0), {})).rejects.toThrow(DENIED);
  });

  it('cannot widen a consumer behind a create subject it is allowed', async () => {
    const { raw } = await login('agent-n1');
    const name = 'widened';
    const request = { stream_name: DECISIONS_STREAM, action: 'create', config: { name, filter_subject: 'muster.bind.n2', ack_policy: 'none', deliver_policy: 'all' } };
    const reply = await raw.request(`$JS.API.CONSUMER.CREATE.${DECISIONS_STREAM}.${name}.muster.bind.n1`, JSON.stringify(request), { timeoutMs: 10_000 });
    expect(reply.json<{ error?: { description: string } }>().error?.description).toMatch(/did not match filtered subject/);
    await expect(admin.consumerInfo(DECISIONS_STREAM, name)).rejects.toThrow(/consumer not found/);
    // the forms without a filter in the subject are not allowed at all
    for (const subject of [`$JS.API.CONSUMER.CREATE.${DECISIONS_STREAM}`, `$JS.API.CONSUMER.CREATE.${DECISIONS_STREAM}.${name}`, `$JS.API.CONSUMER.DURABLE.CREATE.${DECISIONS_STREAM}.${name}`]) {
      await expect(raw.request(subject, JSON.stringify(request), { timeoutMs: 10_000 }), subject).rejects.toThrow(DENIED);
    }
  });
});

describe('simulator', () => {
  it('speaks and reads for its simulated nodes, and writes nothing else', async () => {
    const { bus, raw } = await login('simulator');
    const node = { id: 'sim-1', labels: {}, capacity: { cpu: 1000, memoryMb: 1024 }, gpus: [] };
    expect((await publishInput(bus, 'muster.in.node.sim-1.register', node, 'sim-1:register:b:1')).seq).toBeGreaterThan(0);
    expect(await beatsHeard(bus, ['muster.hb.sim-1'])).toContain('muster.hb.sim-1');
    await publishAsLeader('muster.bind.sim-1', { type: 'Bind', jobId: 'b-sim', session: 1, at: 4, parts: [] });
    await publishAsLeader('muster.stop.sim-1', { type: 'Stop', jobId: 'b-sim', members: [0], reason: 'cancel' });
    expect((await firstMessage(bus, 'muster.bind.sim-1')).subject).toBe('muster.bind.sim-1');
    expect((await firstMessage(bus, 'muster.stop.sim-1')).subject).toBe('muster.stop.sim-1');
    for (const subject of ['muster.in.submit', subjects.log, 'muster.decision.b-sim']) {
      await expect(publishJson(raw, subject, {}), subject).rejects.toThrow(DENIED);
    }
    await readDenied(bus, 'muster.decision.b-sim');
  });
});

describe('auditor', () => {
  it('reads the log, the inputs, the lease and the snapshots', async () => {
    const { bus } = await login('auditor');
    const end = (await streamInfo(bus, LOG_STREAM)).lastSeq;
    const logged = [];
    for await (const entry of readLog(bus)) logged.push(entry.seq);
    expect(logged).toEqual(Array.from({ length: end }, (_, i) => i + 1));
    expect(await (await openLeaderLease(bus)).readLease()).toMatchObject({ id: 's1', term: 1 });
    expect((await listSnapshots(bus)).map((s) => s.seq)).toEqual([2]);
    expect((await firstMessage(bus, 'muster.decision.*')).subject).toMatch(/^muster\.decision\./);
  });

  it('writes nothing: no log, no input, no lease, no submission through the API', async () => {
    const { raw } = await login('auditor');
    const logBefore = await messages(LOG_STREAM);
    for (const subject of [subjects.log, 'muster.in.submit', 'muster.in.queue.team-a.set', '$KV.muster_leader.leader']) {
      await expect(publishJson(raw, subject, {}), subject).rejects.toThrow(DENIED);
    }
    await expect(raw.request('muster.api.submit', JSON.stringify(spec('aud-1')), { timeoutMs: 10_000 })).rejects.toThrow(DENIED);
    expect(await messages(LOG_STREAM)).toBe(logBefore);
  });

  it('asks the read-only API, the queues included', async () => {
    const served = scheduler.serve('muster.api.queues.list', () => JSON.stringify({ ok: true, queues: [{ name: 'team-a' }] }));
    await scheduler.flush();
    const client = new MusterClient((await login('auditor')).bus, { timeoutMs: 10_000 });
    await expect.poll(() => client.queues().catch((err: unknown) => err), { timeout: 15_000, interval: 100 }).toEqual([{ name: 'team-a' }]);
    served.unsubscribe();
  });
});

describe('admin', () => {
  it('sets the scheduling policy and the queues (operator inputs no other role may publish)', async () => {
    const client = new MusterClient((await login('admin')).bus, { timeoutMs: 10_000 });
    const before = await messages(IN_STREAM);
    expect((await client.setPolicy({ reserveDepth: 2 })).inputSeq).toBeGreaterThan(0);
    expect(await client.setQueue({ name: 'team-a', guaranteed: { gpus: 4 } })).toEqual({ name: 'team-a', inputSeq: expect.any(Number) });
    expect(await messages(IN_STREAM)).toBe(before + 2);
  });
});

describe('push consumers', () => {
  it('cannot carry stored messages into the log, because nobody may listen on a stored subject', async () => {
    // nats-server 2.9.10 does not check a push consumer's deliver subject against its creator's
    // permissions (nats-server#8274); it delivers only while someone listens there
    const { raw } = await login('submitter');
    const name = 'into-log';
    const request = { stream_name: DECISIONS_STREAM, action: 'create', config: { name, filter_subject: 'muster.decision.push-1', deliver_subject: subjects.log, ack_policy: 'none', deliver_policy: 'all' } };
    const reply = await raw.request(`$JS.API.CONSUMER.CREATE.${DECISIONS_STREAM}.${name}.muster.decision.push-1`, JSON.stringify(request), { timeoutMs: 10_000 });
    expect(reply.json<{ error?: unknown }>().error).toBeUndefined();
    await subscribeDenied(admin, subjects.log);
    const logBefore = await messages(LOG_STREAM);
    await publishAsLeader('muster.decision.push-1', { type: 'GangCommitted', jobId: 'push-1', session: 1, at: 5, allocations: [] });
    // the consumer has the decision to deliver, and delivers nothing: no one listens on the log subject
    await expect.poll(async () => (await admin.consumerInfo(DECISIONS_STREAM, name)).num_pending, { timeout: 15_000 }).toBe(1);
    const info = await admin.consumerInfo(DECISIONS_STREAM, name);
    expect(info.delivered.consumer_seq).toBe(0);
    expect(info.push_bound ?? false).toBe(false);
    expect(await messages(LOG_STREAM)).toBe(logBefore);
  });
});
