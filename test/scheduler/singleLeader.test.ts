import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishInput } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { stateHash } from '@muster/core';
import type { SchedulerEvent } from '@muster/core';
import type { SchedulerHandle } from '@muster/scheduler';
import { startSingleLeader } from '../support/singleLeader.ts';
import type { SingleLeader } from '../support/singleLeader.ts';
import { readDecisionStream, readWholeLog, replay } from '../support/musterLog.ts';
import { eventually } from '../support/schedulerProcess.ts';

const node = (id: string, slots = 16) => ({ id, labels: { zone: 'a' }, capacity: { cpu: 8000, memoryMb: 16384, slots }, gpus: [] });
const job = (id: string, tasks = 2) => ({ id, identity: { user: 'alice' }, tasks, resources: { cpu: 100, memoryMb: 128 } });

describe('scheduler leader on a real nats-server', () => {
  let leader: SingleLeader;
  let bus: Bus;
  let scheduler: SchedulerHandle;

  beforeAll(async () => {
    leader = await startSingleLeader([node('n1'), node('n2')]);
    ({ bus, scheduler } = leader);
  });

  afterAll(async () => {
    await leader?.stop();
  });

  const events = async (): Promise<SchedulerEvent[]> => (await readWholeLog(bus)).flatMap((l) => l.tx.events);

  it('takes a job from muster.in.submit to GangCommitted on muster.decision.<jobId>, in one linear history', async () => {
    await publishInput(bus, 'muster.in.submit', job('j1', 20), 'j1:a');
    const decision = await eventually(async () => (await readDecisionStream(bus)).find((m) => m.subject === 'muster.decision.j1') ?? null, 15_000, 'decision');
    expect(decision.body.type).toBe('GangCommitted');
    const members = (decision.body.allocations as { members: number[] }[]).flatMap((a) => a.members).sort((a, b) => a - b);
    expect(members).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const aboutJ1 = (e: SchedulerEvent): boolean => e.type === 'SessionStarted' || (e.type === 'JobSubmitted' ? e.job.id === 'j1' : 'jobId' in e && e.jobId === 'j1');
    const types = (await events()).filter(aboutJ1).map((e) => e.type);
    expect(types).toContain('JobSubmitted');
    expect(types).toContain('SessionStarted');
    expect(types).toContain('HostDebited');
    expect(types.filter((t) => t === 'MemberBound')).toHaveLength(20);
    expect(types.indexOf('JobSubmitted')).toBeLessThan(types.indexOf('GangCommitted'));
    const binds = (await readDecisionStream(bus)).filter((m) => m.subject.startsWith('muster.bind.') && m.body.jobId === 'j1');
    expect(binds.length).toBeGreaterThanOrEqual(2);
  });

  it('applies the same job once: same msg id is dropped, same job id later is rejected as duplicate', async () => {
    const first = await publishInput(bus, 'muster.in.submit', job('j2'), 'j2:x');
    const again = await publishInput(bus, 'muster.in.submit', job('j2'), 'j2:x');
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(first.seq);
    await publishInput(bus, 'muster.in.submit', job('j2'), 'j2:y');
    const rejected = await eventually(async () => (await events()).find((e) => e.type === 'JobRejected' && e.jobId === 'j2') ?? null, 10_000, 'rejection');
    expect(rejected).toMatchObject({ reason: { category: 'duplicate', path: 'id' } });
    expect((await events()).filter((e) => e.type === 'JobSubmitted' && e.job.id === 'j2')).toHaveLength(1);
  });

  it('rejects malformed JSON, a wrong shape, an oversized message and an unknown subject, and keeps leading', async () => {
    await publishInput(bus, 'muster.in.submit', '{"id": "bad",', 'bad:1');
    await publishInput(bus, 'muster.in.submit', { id: 'j3', identity: { user: 'a' }, tasks: 4, resources: { cpu: 1, memoryMb: 1 }, minInstances: 3 }, 'j3:1');
    await publishInput(bus, 'muster.in.cancel', { job: 'j1' }, 'cancel:1');
    await publishInput(bus, 'muster.in.frobnicate', {}, 'frob:1');
    await expect(publishInput(bus, 'muster.in.submit', 'x'.repeat(2 * 1024 * 1024), 'big:1')).rejects.toThrow();
    await eventually(async () => (await events()).filter((e) => e.type === 'InputRejected' || e.type === 'JobRejected').length >= 5 || null, 10_000, 'rejections');
    const rejections = (await events()).filter((e) => e.type === 'InputRejected' || e.type === 'JobRejected');
    expect(rejections.map((e) => e.reason.path)).toEqual(expect.arrayContaining(['', 'minInstances', 'job']));
    expect(rejections.some((e) => e.type === 'InputRejected' && e.reason.category === 'unknown' && e.subject === 'muster.in.frobnicate')).toBe(true);
    // still leading: a valid job after the garbage is placed
    await publishInput(bus, 'muster.in.submit', job('j4', 1), 'j4:1');
    await eventually(async () => (await readDecisionStream(bus)).some((m) => m.subject === 'muster.decision.j4') || null, 10_000, 'j4 decision');
    expect(scheduler.role()).toBe('leader');
    // the log stays replayable, and replay equals the leader's state
    const log = await readWholeLog(bus);
    expect(stateHash(replay(log))).toBe(stateHash(scheduler.state()));
  });

  it('answers the read API from its state and refuses an invalid submission naming the field', async () => {
    const reply = await bus.request('muster.api.submit', JSON.stringify({ id: 'j5', identity: { user: 'a' }, tasks: 4, resources: { cpu: 1, memoryMb: 1 }, minInstances: 3 }), { timeoutMs: 5000 });
    expect(reply.json()).toMatchObject({ ok: false, error: { code: 'invalid', path: 'minInstances' } });
    const ok = await bus.request('muster.api.submit', JSON.stringify(job('j6', 1)), { timeoutMs: 5000 });
    expect(ok.json()).toMatchObject({ ok: true, jobId: 'j6' });
    await eventually(async () => {
      const r = (await bus.request('muster.api.job.get', JSON.stringify({ jobId: 'j6' }), { timeoutMs: 5000 })).json<{ ok: boolean; job?: { status: string } }>();
      return r.ok && r.job?.status === 'running' ? r : null;
    }, 10_000, 'j6 running');
    const nodes = (await bus.request('muster.api.nodes.list', '', { timeoutMs: 5000 })).json<{ nodes: { id: string }[] }>();
    expect(nodes.nodes.map((n) => n.id)).toEqual(['n1', 'n2']);
  });
});
