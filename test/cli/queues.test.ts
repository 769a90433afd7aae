// Queues, quotas and reclaim through the public path (DESIGN.md §12, issue 13's "observable when
// done"): a real nats-server, a scheduler replica process, a node agent process running real
// commands, and the `muster` command. Two teams' queues each guaranteed half the GPUs; team a
// borrows the idle half; team b submits within its guarantee and is placed in one session by
// preempting whole gangs of a, which are requeued and run again when room frees.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, publishInput } from '@muster/bus';
import { connectClient } from '@muster/client';
import type { MusterClient } from '@muster/client';
import type { JobDecision, JobSummary, QueueView } from '@muster/client';
import type { Decision, NodeSpec } from '@muster/core';
import { createStack } from '@muster/stack';
import type { Stack } from '@muster/stack';
import type { Bus } from '@muster/bus';
import { eventually, replicaStatus } from '../support/schedulerProcess.ts';
import { expectOneLineError, runMuster, spawnMuster } from './runMuster.ts';
import type { MusterProcess } from './runMuster.ts';

const gpuNode = (id: string): NodeSpec => ({
  id,
  labels: { zone: 'a' },
  capacity: { cpu: 32_000, memoryMb: 131_072, slots: 16 },
  gpus: [0, 1, 2, 3].map((g) => ({ id: g, memoryMb: 16_384, model: 'T4', nvlinkDomain: 0 })),
});

/** A gang of two members of one GPU each, in `queue`, running `seconds` (a real process on the agent). */
const gang = (id: string, queue: string, seconds: number) => ({
  id,
  identity: { user: `${queue}-user`, queue, project: 'e2e' },
  roles: [{ name: 'worker', count: 2, resources: { cpu: 1000, memoryMb: 1024, gpus: 1 }, command: ['sleep', String(seconds)] }],
});

describe('queues and reclaim end to end (nats-server, scheduler and agent processes, the muster command)', () => {
  let stack: Stack;
  let dir: string;
  let url: string;
  let client: MusterClient;
  let bus: Bus;
  let agent: MusterProcess;
  const decisions: JobDecision[] = [];
  const watching = new AbortController();

  const file = (name: string, content: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const muster = (args: string[]) => runMuster([...args, '--nats', url]);
  const queues = async (): Promise<Record<string, QueueView>> => {
    const run = await muster(['queues', '--json']);
    expect(run.code, run.stderr).toBe(0);
    return Object.fromEntries((JSON.parse(run.stdout) as QueueView[]).map((q) => [q.name, q]));
  };
  const jobs = async (): Promise<Record<string, JobSummary>> => Object.fromEntries((await client.jobs()).map((j) => [j.id, j]));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'muster-queues-e2e-'));
    stack = createStack({ graceMs: 3000 });
    url = (await stack.startNatsServer()).url;
    stack.spawnScheduler({ id: 'q1', urls: [url], leaseMs: 1000, logLevel: 'info' });
    client = await connectClient(url, { timeoutMs: 3000 });
    bus = await connect({ servers: [url], name: 'queues-e2e' });
    agent = spawnMuster(['agent', '--node', file('nodes.json', [gpuNode('g1'), gpuNode('g2')]), '--nats', url, '--state-dir', join(dir, 'agent'), '--heartbeat-ms', '500', '--log-level', 'warn'], { timeoutMs: 600_000 });
    await eventually(async () => (await client.nodes()).filter((n) => n.status === 'up').length === 2, 60_000, 'both nodes up');
    void (async () => {
      for await (const d of client.watchAll({ deliver: 'all', signal: watching.signal })) decisions.push(d);
    })().catch(() => undefined);
  }, 120_000);

  afterAll(async () => {
    watching.abort();
    agent?.child.kill('SIGINT');
    await agent?.exited;
    await bus?.close().catch(() => undefined);
    await client?.disconnect().catch(() => undefined);
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('refuses bad queues with the field\'s path and sends nothing; the leader takes a bad one from the subject and keeps running', async () => {
    expectOneLineError(await muster(['queue', 'set', file('neg.json', { name: 'a', guaranteed: { gpus: -4 } })]), 2, /guaranteed\.gpus/);
    expectOneLineError(await muster(['queue', 'set', file('odd.json', { name: 'a', quota: 4 })]), 2, /quota: unknown field/);
    expectOneLineError(await muster(['queue', 'set', file('orphan.json', { name: 'a', parent: 'nobody' })]), 2, /parent: unknown queue nobody \(nothing was sent\)/);
    // a publisher that skips the SDK's checks: the leader refuses it at ingest, applies nothing, and goes on
    await publishInput(bus, 'muster.in.queue.a.set', { name: 'a', parent: 'nobody' });
    await publishInput(bus, 'muster.in.queue.b.set', { name: 'a' });
    await publishInput(bus, 'muster.in.queue.c.set', 'not json');
    await new Promise((r) => setTimeout(r, 500));
    expect(Object.keys(await queues())).toEqual(['default']);
    expect((await replicaStatus(bus, 'q1', 3000))?.role).toBe('leader');
  });

  it('muster queue set defines both teams\' queues; muster queues shows them', async () => {
    const run = await muster(['queue', 'set', file('teams.json', [{ name: 'a', guaranteed: { gpus: 4 } }, { name: 'b', guaranteed: { gpus: 4 } }])]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^queue a sent \(input \d+\)\nqueue b sent \(input \d+\)\n$/);
    await eventually(async () => Object.keys(await queues()).join() === 'a,b', 15_000, 'queues a and b');
    const table = await muster(['queues']);
    expect(table.stdout.split('\n')[0]).toMatch(/^QUEUE\s+PARENT\s+WEIGHT\s+GPUS\s+CPU\s+MEM GiB\s+BORROWED\s+PENDING\s+RUNNING$/);
    expect(table.stdout).toMatch(/^a\s+-\s+1\s+0\/4\/-\s+0\/-\/-\s+0\/-\/-\s+-\s+0\s+0$/m);
    // from now on a job must name one of them: the API refuses another at once, naming the field
    expectOneLineError(await muster(['submit', file('lost.json', gang('lost', 'c', 1))]), 1, /lost rejected \(unknown: identity\.queue: unknown queue c\)/);
    expect((await client.jobs()).map((j) => j.id)).not.toContain('lost');
  });

  it('team a borrows the idle half; team b gets its guarantee back in one session by preempting whole gangs of a, which run again when room frees', async () => {
    const teamA = ['a1', 'a2', 'a3', 'a4'];
    const submitA = await muster(['submit', file('a.json', teamA.map((id) => gang(id, 'a', 600))), '--wait', '--json', '--wait-timeout', '60']);
    expect(submitA.code, submitA.stderr).toBe(0);
    const q1 = await queues();
    expect(q1.a).toMatchObject({ used: { gpus: 8 }, borrowed: { gpus: 4 }, running: 4, pending: 0 });
    expect(q1.b).toMatchObject({ used: { gpus: 0 }, borrowed: { gpus: 0 } });

    // team b: two gangs of two GPUs, within its guarantee of four; the cluster is full of a's borrowing
    const submitB = await muster(['submit', file('b.json', [gang('b1', 'b', 3), gang('b2', 'b', 3)]), '--wait', '--json', '--wait-timeout', '60']);
    expect(submitB.code, submitB.stderr).toBe(0);
    const printed = submitB.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; jobId: string; session?: number });
    // placed in the first session that tried it: no wait comes before its commit
    expect(printed.filter((l) => l.type !== 'Submitted').map((l) => [l.jobId, l.type]).sort()).toEqual([['b1', 'GangCommitted'], ['b2', 'GangCommitted']]);

    await eventually(() => decisions.filter((d) => d.type === 'GangAborted' && d.reason.category === 'preempted').length >= 2, 15_000, 'the preemptions in the decisions');
    const preempted = decisions.filter((d): d is Extract<Decision, { type: 'GangAborted' }> => d.type === 'GangAborted' && d.reason.category === 'preempted');
    // whole gangs of a, exactly as many as b needs (two of two GPUs), each naming its preemptor
    expect(preempted).toHaveLength(2);
    const victims = preempted.map((d) => d.jobId).sort();
    for (const v of victims) expect(teamA).toContain(v);
    expect(new Set(victims).size).toBe(2);
    for (const d of preempted) {
      expect(d.final).toBe(false);
      expect(['b1', 'b2']).toContain(d.reason.by);
      // the victims' aborts and their preemptor's commit are one session's
      const commit = decisions.find((c) => c.type === 'GangCommitted' && c.jobId === d.reason.by);
      expect(commit?.session).toBe(d.session);
    }
    const now = await jobs();
    // requeued (a later session may have tried them again and found no room: their reason moves on)
    for (const v of victims) expect(now[v]?.status).toBe('pending');
    for (const b of ['b1', 'b2']) expect(now[b]?.status).toBe('running');
    const q2 = await queues();
    expect(q2.a).toMatchObject({ used: { gpus: 4 }, borrowed: { gpus: 0 }, pending: 2, running: 2 });
    expect(q2.b).toMatchObject({ used: { gpus: 4 }, borrowed: { gpus: 0 }, running: 2 });

    // b's gangs end after 3 s; the requeued victims commit again on the room they free
    await eventually(async () => {
      const j = await jobs();
      return victims.every((v) => j[v]?.status === 'running') && j.b1?.status === 'succeeded' && j.b2?.status === 'succeeded';
    }, 60_000, 'the victims to run again after b finished');
    for (const v of victims) expect(decisions.filter((d) => d.type === 'GangCommitted' && d.jobId === v)).toHaveLength(2);
    expect((await queues()).a).toMatchObject({ used: { gpus: 8 }, borrowed: { gpus: 4 }, running: 4, pending: 0 });
  }, 180_000);
});
