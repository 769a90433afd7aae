// Failure is the gang's (DESIGN.md §15), end to end on a real nats-server, a real scheduler and two
// real agents: a member that exits 7 gets its gang stopped within a second of its report, the gang
// restarts whole (MUSTER_ATTEMPT 1) and fails after maxRestarts; a rule `{onExitCodes:[7], action:
// "fail"}` fails it at once; `muster logs` shows every member's output across the attempts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { MusterClient } from '@muster/client';
import type { JobDetails } from '@muster/client';
import type { NodeSpec } from '@muster/core';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { freePort } from '@muster/stack';
import { runMuster } from '../cli/runMuster.ts';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

const logger = pino({ level: 'silent' });

const node = (id: string): NodeSpec => ({ id, labels: {}, capacity: { cpu: 8000, memoryMb: 16384, slots: 8 }, gpus: [] });

// member 1 fails with 7 two seconds in; the others wait (as gloo or NCCL peers do) and say when they are stopped
const SCRIPT = [
  'echo "member $MUSTER_MEMBER attempt $MUSTER_ATTEMPT of $WORLD_SIZE starts"',
  'if [ "$MUSTER_MEMBER" = 1 ]; then sleep 2; echo "failing at $(date +%s%3N)"; exit 7; fi',
  'trap \'echo "stopped at $(date +%s%3N)"; exit 143\' TERM',
  'sleep 60 & wait',
].join('\n');

describe('a failing member fails its gang (two real agents)', () => {
  let bus: TestBus;
  let scheduler: SchedulerHandle;
  const agents: Agent[] = [];
  let client: MusterClient;
  let dir: string;

  const muster = (args: string[]) => runMuster([...args, '--nats', bus.urls.join(',')], { timeoutMs: 120_000 });
  const submit = async (id: string, failurePolicy: unknown): Promise<void> => {
    const file = join(dir, `${id}.json`);
    const spec = {
      id,
      identity: { user: 'alice', queue: 'default', project: 'fail' },
      roles: [{ name: 'w', count: 4, resources: { cpu: 100, memoryMb: 64 }, command: ['sh', '-c', SCRIPT] }],
      placement: { policy: 'pack', ptile: 2 },
      failurePolicy,
    };
    writeFileSync(file, JSON.stringify(spec));
    const run = await muster(['submit', file]);
    expect(run.code, run.stderr).toBe(0);
  };
  const finished = (id: string) =>
    eventually(async () => {
      const job = (await client.job(id)) as JobDetails;
      return job.status === 'pending' || job.status === 'running' ? null : job;
    }, 90_000, `${id} to finish`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'muster-gang-failure-'));
    bus = await startTestBus();
    scheduler = await startScheduler({ natsUrl: bus.urls, id: 'fail', logger, leaseMs: 300, heartbeatTimeoutMs: 0, metricsPort: await freePort() });
    await eventually(() => scheduler.role() === 'leader', 15_000, 'leadership');
    for (const id of ['f1', 'f2']) {
      agents.push(await startAgent({ natsUrl: bus.urls, nodes: [node(id)], address: '127.0.0.1', heartbeatMs: 200, logger, stateDir: join(dir, id), stopGraceMs: 1_000, outputLimits: { flushMs: 50 } }));
    }
    client = new MusterClient(bus.bus, { timeoutMs: 10_000 });
    await eventually(async () => (await client.nodes()).length === 2, 15_000, 'both nodes to register');
  }, 60_000);

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await scheduler?.stop();
    await bus?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a member exiting 7: the others are stopped within a second, the gang restarts whole as attempt 1, then fails after maxRestarts', async () => {
    await submit('fail-restart', { maxRestarts: 1, backoffMs: 500 });
    const job = await finished('fail-restart');
    const logs = await muster(['logs', 'fail-restart']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(job.status, logs.stdout).toBe('failed');

    // every member started in both attempts, each attempt marked, attempt 1 after attempt 0
    const out = logs.stdout.split('\n');
    const boundary = out.findIndex((l) => /attempt 1$/.test(l) && !l.includes('|'));
    expect(boundary, logs.stdout).toBeGreaterThan(0);
    const starts = (lines: string[], attempt: number) =>
      lines.filter((l) => l.includes(`attempt ${attempt} of 4 starts`)).map((l) => l.split(' | ')[0]).sort();
    expect(starts(out.slice(0, boundary), 0)).toEqual(['0', '1', '2', '3']);
    expect(starts(out.slice(boundary), 1)).toEqual(['0', '1', '2', '3']);

    // in each attempt the other three were stopped within a second of member 1's exit
    const times = (lines: string[], what: string) => lines.filter((l) => l.includes(what)).map((l) => Number(/(\d{13})/.exec(l)?.[1]));
    for (const part of [out.slice(0, boundary), out.slice(boundary)]) {
      const [failedAt] = times(part, 'failing at');
      const stoppedAt = times(part, 'stopped at');
      expect(stoppedAt, logs.stdout).toHaveLength(3);
      const late = Math.max(...stoppedAt) - (failedAt as number);
      expect(late, `stopped ${late} ms after the failure`).toBeLessThan(1_000);
    }

    // the leader counted the one restart
    const metrics = await (await fetch(scheduler.metricsUrl as string)).text();
    expect(metrics).toMatch(/^muster_gang_restarts_total\{replica="fail"\} 1$/m);

    // --attempt and --member pick lines out
    const one = await muster(['logs', 'fail-restart', '--attempt', '1', '--member', '2']);
    expect(one.stdout.trim().split('\n')).toEqual(['──┼ attempt 1', '2 | member 2 attempt 1 of 4 starts', expect.stringMatching(/^2 \| stopped at \d{13}$/)]);

    // the job view says which attempt failed last, and how
    expect(job).toMatchObject({ attempt: 1, lastFailure: { member: 1, exitCode: 7 } });
    const jobs = await muster(['jobs']);
    expect(jobs.stdout).toMatch(/^fail-restart\s+failed\s.*\s1\s+member 1 exit 7\s/m);
  }, 150_000);

  it('a rule {onExitCodes: [7], action: "fail"} fails the gang at its first failure', async () => {
    await submit('fail-rule', { maxRestarts: 3, backoffMs: 500, rules: [{ onExitCodes: [7], action: 'fail' }] });
    const job = await finished('fail-rule');
    expect(job).toMatchObject({ status: 'failed', attempt: 0, lastFailure: { member: 1, exitCode: 7 } });
    const logs = await muster(['logs', 'fail-rule']);
    expect(logs.stdout).not.toContain('attempt 1');
  }, 120_000);

  it('muster logs: an unknown job and bad flags are one-line errors', async () => {
    const unknown = await muster(['logs', 'no-such-job']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/^muster: .*no-such-job/);
    const bad = await muster(['logs', 'fail-rule', '--member', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^muster: .*--member.*non-negative integer/);
  });
});
