import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connect, ensureStreams, publishInput, readLog } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { WorkloadRecorder, runScenario, shardGet } from '@muster/core';
import type { JobState, LoggedTransaction, RecordedWorkload } from '@muster/core';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { expectOneLineError, runMuster } from '../cli/runMuster.ts';
import { freePort, startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';

// `muster simulate --from-log`: the workload taken from the log a real scheduler wrote on a real
// nats-server (arrivals at their stamps, observed run times), re-run offline under another policy.

const CLI_MS = 120_000;
const node = (id: string) => ({ id, capacity: { cpu: 8000, memoryMb: 8192, slots: 2 }, gpus: [] });
const job = (id: string, tasks: number, more: Record<string, unknown> = {}) => ({ id, identity: { user: 'u' }, tasks, resources: { cpu: 100, memoryMb: 64 }, ...more });

describe('muster simulate --from-log', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let scheduler: SchedulerHandle;
  let inputs = 0;
  let recorded: RecordedWorkload;

  const input = (subject: string, body: unknown) => publishInput(bus, subject, body, `from-log:${++inputs}`);
  const until = async (what: string, check: (job: JobState) => boolean, jobId: string): Promise<JobState> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const job = shardGet(scheduler.state().jobs, jobId);
      if (job !== undefined && check(job)) return job;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${jobId} to be ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const finish = async (jobId: string): Promise<void> => {
    const running = await until('running', (j) => j.status === 'running', jobId);
    for (const [member, m] of running.members.entries()) if (m !== null) await input(`muster.in.node.${m.node}.done`, { jobId, member, ok: true });
    await until('finished', (j) => j.status === 'succeeded', jobId);
  };

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'simulate-from-log' });
    await ensureStreams(bus, { replicas: 1 });
    scheduler = await startScheduler({ natsUrl: server.url, id: 's1', logger: pino({ level: 'silent' }), leaseMs: 500, heartbeatTimeoutMs: 600_000 });
    for (const n of [node('n1'), node('n2')]) await input(`muster.in.node.${n.id}.register`, n);
    // a and b fill both hosts; c waits for them; d never fits; e never runs and gives no hint
    await input('muster.in.submit', job('a', 2));
    await input('muster.in.submit', job('b', 2));
    await until('running', (j) => j.status === 'running', 'b');
    await input('muster.in.submit', job('c', 4));
    await input('muster.in.submit', job('d', 9, { runtimeMs: 1000 }));
    await input('muster.in.submit', job('e', 9));
    await input('muster.in.submit', job('bad', 2, { minInstances: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 150));
    await finish('a');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await finish('b');
    await new Promise((resolve) => setTimeout(resolve, 120));
    await finish('c');
    const recorder = new WorkloadRecorder();
    for await (const logged of readLog(bus)) recorder.add(logged);
    recorded = recorder.workload();
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await bus?.close();
    await server?.stop();
  });

  it('takes the nodes, the arrivals at their stamps and the observed run times from the log, and notes what it cannot take', async () => {
    const log: LoggedTransaction[] = [];
    for await (const logged of readLog(bus)) log.push(logged);
    const stampOf = (type: string, jobId: string) => log.find((l) => l.tx.events.some((e) => e.type === type && 'jobId' in e && e.jobId === jobId))!.tx.at;
    const submittedAt = (jobId: string) => log.find((l) => l.tx.events.some((e) => e.type === 'JobSubmitted' && e.job.id === jobId))!.tx.at;
    const origin = submittedAt('a');
    expect(recorded.scenario.nodes.map((n) => (n as { id: string }).id)).toEqual(['n1', 'n2']);
    expect(recorded.scenario.policy).toEqual({ reserveDepth: 1, assumedRuntimeMs: 86_400_000 });
    const entries = recorded.scenario.workload.map((e) => ({ id: (e.submit as { id: string }).id, at: e.at, runMs: e.runMs }));
    // the rejected submission is no arrival; e is left out
    expect(entries.map((e) => e.id)).toEqual(['a', 'b', 'c', 'd']);
    for (const id of ['a', 'b', 'c']) {
      expect(entries.find((e) => e.id === id)).toEqual({ id, at: submittedAt(id) - origin, runMs: stampOf('JobFinished', id) - stampOf('GangCommitted', id) });
    }
    expect(entries.find((e) => e.id === 'a')!.runMs).toBeGreaterThanOrEqual(150);
    expect(entries.find((e) => e.id === 'd')).toMatchObject({ runMs: 1000 });
    expect(recorded.notes).toEqual(['job d never ran: it runs its runtimeMs hint, 1000 ms', 'job e never ran and gives no runtimeMs hint: left out']);
  });

  it('re-runs it from the command line: the same bytes as the workload run offline, notes on stderr, and under the policy given', async () => {
    const first = await runMuster(['simulate', '--from-log', '--nats', server.url]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe('muster: note: job d never ran: it runs its runtimeMs hint, 1000 ms\nmuster: note: job e never ran and gives no runtimeMs hint: left out\n');
    const offline = runScenario(recorded.scenario);
    expect(offline.ok && offline.lines.map((l) => `${l}\n`).join('')).toBe(first.stdout);
    const lines = first.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; jobId?: string; outcome?: string });
    expect(lines.filter((l) => l.type === 'JobStats').map((l) => [l.jobId, l.outcome])).toEqual([['a', 'succeeded'], ['b', 'succeeded'], ['c', 'succeeded'], ['d', 'pending']]);
    expect(lines.at(-1)).toMatchObject({ type: 'Summary', jobs: { succeeded: 3, pending: 1 } });

    const off = await runMuster(['simulate', '--from-log', '--nats', server.url, '--policy', '{"reserveDepth":0}']);
    expect(off.code, off.stderr).toBe(0);
    const policied = runScenario(recorded.scenario, { policy: { reserveDepth: 0 } });
    expect(policied.ok && policied.lines.map((l) => `${l}\n`).join('')).toBe(off.stdout);
    // c is reserved under the log's own policy, not with reserveDepth 0
    expect(first.stdout).toMatch(/"type":"GangReserved","jobId":"c"/);
    expect(off.stdout).not.toMatch(/GangReserved/);
  }, CLI_MS);

  it('saves the workload with --save-workload, as a scenario file that re-runs offline to the same bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muster-from-log-'));
    try {
      const file = join(dir, 'last-week.json');
      const live = await runMuster(['simulate', '--from-log', '--nats', server.url, '--save-workload', file, '--policy', '{"reserveDepth":8}']);
      expect(live.code, live.stderr).toBe(0);
      const offline = await runMuster(['simulate', file, '--policy', '{"reserveDepth":8}']);
      expect(offline.code, offline.stderr).toBe(0);
      expect(offline.stderr).toBe('');
      expect(offline.stdout).toBe(live.stdout);
      expectOneLineError(await runMuster(['simulate', file, '--save-workload', join(dir, 'x.json')]), 2, /--save-workload writes the workload of --from-log/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, CLI_MS);

  it('fails with one line: a file and --from-log, a bad --policy, a NATS that is not there', async () => {
    expectOneLineError(await runMuster(['simulate', 'x.json', '--from-log']), 2, /not both/);
    expectOneLineError(await runMuster(['simulate']), 2, /--from-log/);
    expectOneLineError(await runMuster(['simulate', '--from-log', '--nats', server.url, '--policy', '{"reserveDepth":-1}']), 2, /command line: reserveDepth/);
    expectOneLineError(await runMuster(['simulate', '--from-log', '--nats', server.url, '--policy', '{oops']), 2, /--policy is not valid JSON/);
    const port = await freePort();
    expectOneLineError(await runMuster(['simulate', '--from-log', '--nats', `nats://127.0.0.1:${port}`, '--timeout', '1000']), 3, /cannot reach NATS/);
  }, CLI_MS);
});
