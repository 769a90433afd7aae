import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishInput } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { auditLog } from '@muster/auditor';
import { shardGet, stateHash } from '@muster/core';
import type { SchedulerEvent } from '@muster/core';
import type { SchedulerHandle } from '@muster/scheduler';
import { startSingleLeader } from '../support/singleLeader.ts';
import type { SingleLeader } from '../support/singleLeader.ts';
import { readWholeLog, replay } from '../support/musterLog.ts';
import { eventually } from '../support/schedulerProcess.ts';

const node = { id: 'n1', labels: {}, capacity: { cpu: 8000, memoryMb: 16384, slots: 8 }, gpus: [] };
const job = (id: string) => ({ id, identity: { user: 'alice' }, tasks: 2, resources: { cpu: 100, memoryMb: 128 } });

// A leader that keeps finished jobs 0 ms: once a job's members report done it is retired from the
// state (JobsRetired in a fact transaction), while its id stays a duplicate and the log stays auditable.
describe('finished jobs are retired from the state', () => {
  let leader: SingleLeader;
  let bus: Bus;
  let scheduler: SchedulerHandle;

  beforeAll(async () => {
    leader = await startSingleLeader([node], { retainFinishedMs: 0 });
    ({ bus, scheduler } = leader);
  });

  afterAll(async () => {
    await leader?.stop();
  });

  const api = async (subject: string, body: unknown) => (await bus.request(subject, JSON.stringify(body), { timeoutMs: 5000 })).json<Record<string, unknown>>();

  it('retires a job after its members are done; the API reports it retired; its id stays taken', async () => {
    await publishInput(bus, 'muster.in.submit', job('r1'), 'r1:a');
    await eventually(() => shardGet(scheduler.state().jobs, 'r1')?.status === 'running' || null, 10_000, 'r1 running');
    for (const member of [0, 1]) await publishInput(bus, 'muster.in.node.n1.done', { jobId: 'r1', member, ok: true }, `r1:${member}:done`);
    await eventually(() => (scheduler.state().retired !== undefined && shardGet(scheduler.state().retired!, 'r1') !== undefined) || null, 10_000, 'r1 retired');
    expect(shardGet(scheduler.state().jobs, 'r1')).toBeUndefined();

    expect(await api('muster.api.job.get', { jobId: 'r1' })).toMatchObject({ ok: true, job: { id: 'r1', status: 'succeeded', retired: true } });
    expect(await api('muster.api.submit', job('r1'))).toMatchObject({ ok: false, error: { code: 'duplicate', path: 'id' } });
    expect(await api('muster.api.explain', { jobId: 'r1' })).toMatchObject({ ok: false, error: { message: expect.stringContaining('retired') } });

    // through the stream too: the same id later is a duplicate, not a new job
    await publishInput(bus, 'muster.in.submit', job('r1'), 'r1:b');
    const events = async (): Promise<SchedulerEvent[]> => (await readWholeLog(bus)).flatMap((l) => l.tx.events);
    await eventually(async () => (await events()).some((e) => e.type === 'JobRejected' && e.jobId === 'r1') || null, 10_000, 'duplicate rejection');

    const log = await readWholeLog(bus);
    const retiredIn = log.find((l) => l.tx.events.some((e) => e.type === 'JobsRetired'));
    expect(retiredIn?.tx.kind).toBe('fact');
    expect(stateHash(replay(log))).toBe(stateHash(scheduler.state()));
    const report = await auditLog(bus);
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
  });
});
