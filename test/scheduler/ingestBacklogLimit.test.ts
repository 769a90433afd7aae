// A gang's completion stored in MUSTER_IN before its runtime limit, but not yet ingested when the
// limit falls due (the leader paused, or behind on a backlog), must finish the gang: the leader
// holds the limit back to when the first input it has not taken was stored (SessionStarted.dueBy).
// Without that, the first turn after the pause takes 256 inputs of the backlog (its batch, set
// here) and stops j.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, publishInput, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { auditLog } from '@muster/auditor';
import { shardGet } from '@muster/core';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { readDecisionStream, readWholeLog, replay } from '../support/musterLog.ts';
import { eventually, replicaStatus, spawnScheduler } from '../support/schedulerProcess.ts';
import type { SchedulerProcess } from '../support/schedulerProcess.ts';

const LIMIT_MS = 2_000;
const BACKLOG = 2_000;
const node = { id: 'n1', labels: {}, capacity: { cpu: 4_000, memoryMb: 4_096, slots: 4 }, gpus: [] };

describe('a runtime limit falls due only once the completions stored before it are ingested', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let leader: SchedulerProcess;

  beforeAll(async () => {
    server = await startNatsServer();
    leader = spawnScheduler({ id: 's1', urls: [server.url], leaseMs: 600, maxBatchInputs: 256 });
    bus = await connect({ servers: server.url, name: 'test' });
    await eventually(async () => (await replicaStatus(bus, 's1'))?.role === 'leader' || null, 20_000, 's1 leading');
  }, 30_000);

  afterAll(async () => {
    await leader?.kill();
    await bus?.close();
    await server?.stop();
  });

  it('a member done while the leader was paused past the limit finishes its gang, and the log audits clean', async () => {
    await publishInput(bus, subjects.nodeInput(node.id, 'register'), node, 'n1:register:1');
    for (const id of ['j', 'k']) {
      await publishInput(bus, 'muster.in.submit', { id, identity: { user: 'alice' }, tasks: 1, resources: { cpu: 100, memoryMb: 64 }, runtimeLimitMs: LIMIT_MS }, `${id}:1`);
    }
    await eventually(async () => (await readDecisionStream(bus)).filter((m) => m.body.type === 'GangCommitted').length === 2 || null, 10_000, 'both committed');
    // the leader stops reading; a backlog of inputs is stored (bad submissions: the leader rejects
    // them, BACKLOG / 256 turns' worth), then j's member finishes; k's never reports; the limit passes
    expect(leader.signal('SIGSTOP')).toBe(true);
    const paused = Date.now();
    for (let i = 0; i < BACKLOG; i += 200) {
      await Promise.all(Array.from({ length: Math.min(200, BACKLOG - i) }, (_, k) => publishInput(bus, 'muster.in.submit', { id: `bad-${i + k}` }, `bad-${i + k}:1`)));
    }
    await publishInput(bus, subjects.nodeInput(node.id, 'done'), { jobId: 'j', member: 0, ok: true }, 'j:0:done');
    // stored well before the limit (else the test says nothing)
    expect(Date.now() - paused).toBeLessThan(LIMIT_MS - 200);
    await new Promise((r) => setTimeout(r, LIMIT_MS + 1_000));
    expect(leader.signal('SIGCONT')).toBe(true);

    const state = await eventually(async () => {
      const s = replay(await readWholeLog(bus));
      return shardGet(s.jobs, 'j')?.status !== 'running' && shardGet(s.jobs, 'k')?.status !== 'running' ? s : null;
    }, 20_000, 'both gangs ended');
    expect(shardGet(state.jobs, 'j')?.status).toBe('succeeded');
    // a gang whose member never reported is still stopped at its limit
    expect(shardGet(state.jobs, 'k')?.status).toBe('runtime-limit');
    const report = await auditLog(bus);
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
  }, 40_000);
});
