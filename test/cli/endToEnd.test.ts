// The whole path as a user drives it: `muster submit/jobs/nodes/explain/cancel` against a real
// nats-server, a real scheduler replica and a real node agent that runs commands.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { MusterClient } from '@muster/client';
import type { JobDetails, JobSummary, NodeSummary } from '@muster/client';
import type { Explanation, NodeSpec } from '@muster/core';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually, replicaStatus } from '../support/schedulerProcess.ts';
import { expectOneLineError, runMuster, spawnMuster } from './runMuster.ts';

const logger = pino({ level: 'silent' });

const gpuNode: NodeSpec = {
  id: 'gpu-1',
  labels: { zone: 'a', gpu_model: 'T4' },
  capacity: { cpu: 8000, memoryMb: 16384, slots: 8 },
  gpus: [0, 1].map((id) => ({ id, memoryMb: 16384, model: 'T4', nvlinkDomain: 0 })),
};
const cpuNode: NodeSpec = { id: 'cpu-1', labels: { zone: 'b' }, capacity: { cpu: 4000, memoryMb: 8192, slots: 8 }, gpus: [] };

describe('muster end to end (real nats-server, scheduler and agent)', () => {
  let bus: TestBus;
  let scheduler: SchedulerHandle;
  let agent: Agent;
  let client: MusterClient;
  let dir: string;
  let nats: string[];

  const file = (name: string, content: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const job = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    identity: { user: 'alice', queue: 'default', project: 'e2e' },
    tasks: 1,
    resources: { cpu: 500, memoryMb: 256 },
    runtimeMs: 200,
    ...extra,
  });
  const muster = (args: string[]) => runMuster([...args, '--nats', nats.join(',')]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'muster-e2e-'));
    bus = await startTestBus();
    nats = bus.urls;
    scheduler = await startScheduler({ natsUrl: nats, id: 'e2e', logger, leaseMs: 300, heartbeatTimeoutMs: 0 });
    await eventually(() => scheduler.role() === 'leader', 15_000, 'leadership');
    agent = await startAgent({ natsUrl: nats, nodes: [gpuNode, cpuNode], heartbeatMs: 200, logger, stateDir: join(dir, 'agent'), stopGraceMs: 500 });
    client = new MusterClient(bus.bus);
    await eventually(async () => (await client.nodes()).length === 2, 15_000, 'both nodes to register');
  });

  afterAll(async () => {
    await agent?.stop();
    await scheduler?.stop();
    await bus?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('submit --wait prints the submission and the GangCommitted placement, exit 0', async () => {
    const run = await muster(['submit', file('one.json', job('one', { tasks: 2 })), '--wait', '--wait-timeout', '30']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^submitted one \(input \d+\)$/m);
    expect(run.stdout).toMatch(/^one {2}placed {3}(gpu-1|cpu-1) task\[0,1\]$/m);
  });

  it('submit --wait --json prints one JSON object per line, the decision in the contract shape', async () => {
    const run = await muster(['submit', file('two.json', [job('two-a'), job('two-b')]), '--wait', '--json', '--wait-timeout', '30']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.type === 'Submitted').map((l) => l.jobId)).toEqual(['two-a', 'two-b']);
    const committed = lines.filter((l) => l.type === 'GangCommitted');
    expect(committed.map((l) => l.jobId).sort()).toEqual(['two-a', 'two-b']);
    expect(committed[0]).toMatchObject({ session: expect.any(Number), at: expect.any(Number), allocations: [{ role: 'task', members: [0] }] });
  });

  it('a real command runs on the agent with its GPU ids, and its exit releases the member', async () => {
    const out = join(dir, 'cuda');
    const spec = job('cuda', {
      tasks: undefined,
      resources: undefined,
      roles: [{ name: 'worker', count: 2, resources: { cpu: 500, memoryMb: 256, gpus: 1 }, command: ['sh', '-c', `echo "$CUDA_VISIBLE_DEVICES" > "${out}-$MUSTER_MEMBER"; sleep 0.5`] }],
      select: "gpu_model == 'T4'",
    });
    const run = await muster(['submit', file('cuda.json', spec), '--wait', '--wait-timeout', '30']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^cuda {2}placed {3}gpu-1 worker\[0,1\] gpus 0,1$/m);
    await eventually(async () => (await client.job('cuda')).status === 'succeeded', 20_000, 'the job to finish');
    const seen = readdirSync(dir).filter((f) => f.startsWith('cuda-')).map((f) => readFileSync(join(dir, f), 'utf8').trim()).sort();
    expect(seen).toEqual(['0', '1']);
    const nodes = JSON.parse((await muster(['nodes', '--json'])).stdout) as NodeSummary[];
    expect(nodes.find((n) => n.id === 'gpu-1')?.gpus.used).toBe(0);
  });

  it('jobs and nodes print readable tables, and JSON with --json', async () => {
    const jobs = await muster(['jobs']);
    expect(jobs.code).toBe(0);
    expect(jobs.stdout.split('\n')[0]).toMatch(/^JOB\s+STATUS\s+USER\s+QUEUE\s+PRIO\s+MEMBERS\s+NODES\s+REASON\s+ATTEMPT\s+LAST FAILURE\s+EXPECTED START$/);
    expect(jobs.stdout).toMatch(/^one\s+\w+\s+alice\s+default\s+0\s+2\s/m);
    const rows = JSON.parse((await muster(['jobs', '--json', '--status', 'succeeded'])).stdout) as JobSummary[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    const nodes = await muster(['nodes']);
    expect(nodes.code).toBe(0);
    expect(nodes.stdout.split('\n')[0]).toMatch(/^NODE\s+STATUS\s+CPU\s+MEM GiB\s+GPUS\s+SLOTS\s+JOBS\s+LABELS$/);
    expect(nodes.stdout).toMatch(/^gpu-1\s+up\s+[\d.]+\/8\s+[\d.]+\/16\s+\d\/2\s+\d+\/8\s+\S+\s+gpu_model=T4,zone=a$/m);
    // --limit: the first rows, and stderr says how many were left out
    const all = (JSON.parse((await muster(['jobs', '--json'])).stdout) as JobSummary[]).map((r) => r.id);
    expect(all.length).toBeGreaterThan(1);
    const one = await muster(['jobs', '--json', '--limit', '1']);
    expect((JSON.parse(one.stdout) as JobSummary[]).map((r) => r.id)).toEqual(all.slice(0, 1));
    expect(one.stderr).toBe(`showing 1 of ${all.length} jobs: the rest did not fit one reply (--limit, or --status for jobs, asks for fewer)\n`);
    const firstNode = await muster(['nodes', '--limit', '1']);
    expect(firstNode.stdout.trim().split('\n')).toHaveLength(2);
    expect(firstNode.stderr).toMatch(/^showing 1 of \d+ nodes: /);
  });

  it('explain says why a pending job waits, in words and host counts', async () => {
    await client.submit(job('too-big', { resources: { cpu: 500, memoryMb: 256, gpus: 4 } }));
    await eventually(async () => ((await client.job('too-big')) as JobDetails).reason !== null, 15_000, 'an attempt to place too-big');
    const run = await muster(['explain', 'too-big']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^job too-big is pending \(placement-unsatisfiable\)/);
    expect(run.stdout).toMatch(/^HOSTS/m);
    expect(run.stdout).toMatch(/insufficient-gpu/);
    const json = JSON.parse((await muster(['explain', 'too-big', '--json'])).stdout) as Explanation;
    expect(json).toMatchObject({ jobId: 'too-big', status: 'pending', reason: { category: 'placement-unsatisfiable' }, eligible: 2 });
  });

  it('cancel ends a pending job with a final cancelled decision', async () => {
    const run = await muster(['cancel', 'too-big']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^cancel of too-big requested \(input \d+\)$/m);
    const decision = await client.wait('too-big', { timeoutMs: 15_000 });
    expect(decision).toMatchObject({ type: 'GangAborted', final: true, reason: { category: 'cancelled' } });
  });

  it('policy sets the scheduling policy (the leader folds it), and a bad one is refused naming the field, nothing sent', async () => {
    expectOneLineError(await muster(['policy', file('bad-policy.json', { reserveDepth: -2 })]), 2, /reserveDepth/);
    expectOneLineError(await muster(['policy', file('odd-policy.json', { backfill: true })]), 2, /backfill/);
    const run = await muster(['policy', file('policy.json', { reserveDepth: 3 })]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^policy \{"reserveDepth":3\} sent \(input \d+\)$/m);
    await eventually(() => scheduler.state().policy?.reserveDepth === 3, 15_000, 'the policy folded');
    // a new log started under the v1.1 defaults; the fields not named stay
    expect(scheduler.state().policy).toEqual({ reserveDepth: 3, assumedRuntimeMs: 86_400_000 });
  });

  it('a job that times out under --wait prints the waits and the final abort, exit 1 with one line', async () => {
    const run = await muster(['submit', file('late.json', job('late', { resources: { cpu: 64000, memoryMb: 256 }, timeoutMs: 1500 })), '--wait', '--wait-timeout', '30']);
    expectOneLineError(run, 1, /job late aborted \(timeout\)/);
    expect(run.stdout).toMatch(/^late {2}waits {4}placement-unsatisfiable/m);
    expect(run.stdout).toMatch(/^late {2}aborted {2}timeout/m);
  });

  it('a job id already accepted is rejected by the service: exit 1, one line', async () => {
    expectOneLineError(await muster(['submit', file('dup.json', job('one'))]), 1, /one rejected \(duplicate: job one was already accepted\)/);
  });

  it('explain of an unknown job is exit 1, one line', async () => {
    expectOneLineError(await muster(['explain', 'nobody']), 1, /unknown job nobody/);
  });

  it('the SDK example of docs/client.md runs: submits, waits for the placement, explains', async () => {
    const example = new URL('../../examples/sdk/submitAndWait.ts', import.meta.url).pathname;
    const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', example], { env: { ...process.env, NATS_URL: nats.join(',') } });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.once('close', (code) => resolve({ code, out }));
    });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/^submitted sdk-demo-\w+ \(MUSTER_IN sequence \d+\)$/m);
    expect(run.out).toMatch(/^placed worker members 0,1 on gpu-1 \(GPUs 0,1\)$/m);
    expect(run.out).toMatch(/^job sdk-demo-\w+ is (running|succeeded)/m);
  });

  it('muster agent --simulate N registers N nodes and stops cleanly on SIGINT', async () => {
    const agentProcess = spawnMuster(['agent', '--simulate', '2', '--nats', nats.join(','), '--log-level', 'warn']);
    await eventually(async () => (await client.nodes()).filter((n) => n.id.startsWith('sim-')).length === 2, 60_000, 'sim-1 and sim-2').catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; agent output: ${JSON.stringify(agentProcess.output())}`);
    });
    agentProcess.child.kill('SIGINT');
    const run = await agentProcess.exited;
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
  });

  it('muster scheduler runs a second replica as a standby and stops cleanly on SIGTERM', async () => {
    const replica = spawnMuster(['scheduler', '--id', 'standby-1', '--nats', nats.join(','), '--lease-ms', '300']);
    await eventually(async () => (await replicaStatus(bus.bus, 'standby-1'))?.role === 'standby', 60_000, 'the replica to stand by');
    expect(scheduler.role()).toBe('leader');
    replica.child.kill('SIGTERM');
    const run = await replica.exited;
    expect(run.code).toBe(0);
  });
});
