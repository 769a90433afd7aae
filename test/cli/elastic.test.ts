// Elastic gangs through the public path (DESIGN.md §13, issue 14): a real nats-server, a scheduler
// replica process, a node agent process running real commands, and the `muster` command. On two
// nodes of four GPUs, a busy job holds one node; an elastic job (8 members, minCount 4) starts at
// its minimum and the agent runs exactly those members; when the busy job ends the gang grows and
// the agent starts the members added; a higher-priority job of its queue shrinks it (the agent
// stops exactly the members given up) and, once done, the gang grows back, the same member numbers
// running anew. `muster jobs`, `--json`, `explain`, the SDK's watch and the metrics show each size.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from '@muster/client';
import type { JobDecision, JobSummary, MusterClient } from '@muster/client';
import type { GangResized, NodeSpec } from '@muster/core';
import { createStack, freePort } from '@muster/stack';
import type { Stack } from '@muster/stack';
import { eventually } from '../support/schedulerProcess.ts';
import { parse, value } from '../metrics/promText.ts';
import { expectOneLineError, runMuster, spawnMuster } from './runMuster.ts';
import type { MusterProcess } from './runMuster.ts';

const gpuNode = (id: string): NodeSpec => ({
  id,
  labels: { zone: 'a' },
  capacity: { cpu: 32_000, memoryMb: 131_072, slots: 16 },
  gpus: [0, 1, 2, 3].map((g) => ({ id: g, memoryMb: 16_384, model: 'T4', nvlinkDomain: 0 })),
});

/** One start of a member's process, as its command wrote it: member, node, GPU ids, pid, wall-clock ms. */
interface Start {
  member: number;
  node: string;
  gpus: string;
  pid: number;
  at: number;
}

describe('elastic gangs end to end (nats-server, scheduler and agent processes, the muster command)', () => {
  let stack: Stack;
  let dir: string;
  let url: string;
  let metricsPort: number;
  let client: MusterClient;
  let agent: MusterProcess;
  const decisions: JobDecision[] = [];
  const watching = new AbortController();

  const file = (name: string, content: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const muster = (args: string[]) => runMuster([...args, '--nats', url]);
  const jobs = async (): Promise<Record<string, JobSummary>> => {
    const run = await muster(['jobs', '--json']);
    expect(run.code, run.stderr).toBe(0);
    return Object.fromEntries((JSON.parse(run.stdout) as JobSummary[]).map((j) => [j.id, j]));
  };
  const jobsTableRow = async (id: string): Promise<string> => {
    const run = await muster(['jobs']);
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.split('\n').find((l) => l.startsWith(`${id} `)) ?? '';
  };
  const startsFile = (): string => join(dir, 'train.starts');
  const starts = (): Start[] =>
    existsSync(startsFile())
      ? readFileSync(startsFile(), 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => {
        const [member, node, gpus, pid, at] = l.split(' ');
        return { member: Number(member), node: node!, gpus: gpus!, pid: Number(pid), at: Number(at) };
      })
      : [];
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  /** The processes of train's members running now, by member. */
  const running = (): Map<number, Start> => new Map(starts().filter((s) => alive(s.pid)).map((s) => [s.member, s]));
  const resizes = (): GangResized[] => decisions.filter((d): d is GangResized => d.type === 'GangResized' && d.jobId === 'train');
  const resizeCount = async (category: string): Promise<number> => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    return value(parse(await res.text()), 'muster_decisions_total', { type: 'GangResized', category }) ?? 0;
  };

  const identity = (user: string) => ({ user, queue: 'training', project: 'e2e' });
  const busy = { id: 'busy', identity: identity('bob'), roles: [{ name: 'worker', count: 4, resources: { cpu: 1000, memoryMb: 1024, gpus: 1 }, command: ['sleep', '10'] }] };
  const train = {
    id: 'train',
    identity: identity('ann'),
    roles: [{
      name: 'worker', count: 8, minCount: 4, resources: { cpu: 1000, memoryMb: 1024, gpus: 1 },
      // each process of a member writes one line, then runs until stopped
      command: `echo "$MUSTER_MEMBER $MUSTER_NODE $CUDA_VISIBLE_DEVICES $$ $(date +%s%3N)" >> "${'$'}STARTS"; exec sleep 600`,
      env: { STARTS: '' },
    }],
  };
  const urgent = { id: 'urgent', identity: identity('cat'), priority: 10, roles: [{ name: 'worker', count: 2, resources: { cpu: 1000, memoryMb: 1024, gpus: 1 }, command: ['sleep', '4'] }] };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'muster-elastic-e2e-'));
    train.roles[0]!.env.STARTS = startsFile();
    stack = createStack({ graceMs: 3000 });
    url = (await stack.startNatsServer()).url;
    metricsPort = await freePort();
    stack.spawnScheduler({ id: 'e1', urls: [url], leaseMs: 1000, logLevel: 'info', env: { ...process.env, MUSTER_METRICS_PORT: String(metricsPort) } });
    client = await connectClient(url, { timeoutMs: 3000 });
    agent = spawnMuster(['agent', '--node', file('nodes.json', [gpuNode('g1'), gpuNode('g2')]), '--nats', url, '--state-dir', join(dir, 'agent'), '--heartbeat-ms', '500', '--log-level', 'warn'], { timeoutMs: 600_000 });
    await eventually(async () => (await client.nodes()).filter((n) => n.status === 'up').length === 2, 60_000, 'both nodes up');
    // one queue whose higher-priority jobs may shrink lower-priority ones (DESIGN.md §12)
    const queue = await muster(['queue', 'set', file('queue.json', { name: 'training', preemption: { withinQueue: 'lower-priority' } })]);
    expect(queue.code, queue.stderr).toBe(0);
    await eventually(async () => (await client.queues()).some((q) => q.name === 'training'), 15_000, 'the training queue');
    void (async () => {
      for await (const d of client.watchAll({ deliver: 'all', signal: watching.signal })) decisions.push(d);
    })().catch(() => undefined);
  }, 120_000);

  afterAll(async () => {
    watching.abort();
    agent?.child.kill('SIGINT');
    await agent?.exited;
    await client?.disconnect().catch(() => undefined);
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a minCount above the count is refused by muster submit, naming the field, and nothing is sent', async () => {
    const bad = { ...train, id: 'too-small', roles: [{ ...train.roles[0]!, minCount: 9 }] };
    expectOneLineError(await muster(['submit', file('bad.json', bad)]), 2, /bad\.json: roles\.0\.minCount: 9 is above the role's count 8/);
    const zero = { ...train, id: 'zero', roles: [{ ...train.roles[0]!, minCount: 0 }] };
    expectOneLineError(await muster(['submit', file('zero.json', zero)]), 2, /zero\.json: roles\.0\.minCount/);
    expect(Object.keys(await jobs())).toEqual([]);
  });

  it('on a busy cluster it starts at its minimum, and the agent runs exactly those members', async () => {
    const placed = await muster(['submit', file('busy.json', busy), '--wait', '--wait-timeout', '30']);
    expect(placed.code, placed.stderr).toBe(0);
    const run = await muster(['submit', file('train.json', train), '--wait', '--json', '--wait-timeout', '30']);
    expect(run.code, run.stderr).toBe(0);
    const commit = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; allocations?: { members: number[] }[] }).find((l) => l.type === 'GangCommitted');
    expect(commit?.allocations?.flatMap((a) => a.members).sort()).toEqual([0, 1, 2, 3]);

    await eventually(() => running().size === 4, 15_000, 'four members of train to run');
    await new Promise((r) => setTimeout(r, 500));
    expect(starts().map((s) => s.member).sort()).toEqual([0, 1, 2, 3]);
    const view = (await jobs()).train;
    expect(view).toMatchObject({ status: 'running', size: 4, count: 8, minSize: 4, members: 8 });
    expect(await jobsTableRow('train')).toMatch(/^train\s+running\s+ann\s+training\s+0\s+4\/8\s/);
  });

  it('when the busy job ends it grows to full size and the agent starts the added members', async () => {
    await eventually(async () => (await jobs()).busy?.status === 'succeeded', 30_000, 'busy to finish');
    await eventually(() => running().size === 8, 30_000, 'all eight members of train to run');
    // each member started once; the four added ones where busy was, one GPU each, none shared
    expect(starts().map((s) => s.member).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const devices = starts().map((s) => `${s.node}/${s.gpus}`);
    expect(new Set(devices).size).toBe(8);
    // busy's members finish one by one: each release lets train grow, up to its full size, never shrinking
    await eventually(() => resizes().at(-1)?.members === 8, 10_000, 'the last growth in the decisions');
    const grown = resizes();
    expect(grown.every((r) => r.by === undefined)).toBe(true);
    const sizes = grown.map((r) => r.members);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    expect(new Set(sizes).size).toBe(sizes.length);
    expect(sizes[0]).toBeGreaterThan(4);
    expect((await jobs()).train).toMatchObject({ status: 'running', size: 8, count: 8 });
    expect(await jobsTableRow('train')).toMatch(/\s8\/8\s/);
    const explain = await muster(['explain', 'train']);
    expect(explain.stdout).toContain('with 8 of 8 members (at least 4)');
    expect(await resizeCount('grown')).toBe(grown.length);
    // each added member's process started soon after the resize that added it was decided
    for (const r of grown) {
      const added = r.allocations.flatMap((a) => a.members).filter((m) => m >= 4 && !grown.slice(0, grown.indexOf(r)).some((g) => g.allocations.some((a) => a.members.includes(m))));
      for (const m of added) {
        const started = starts().find((s) => s.member === m)!;
        expect(started.at - r.at).toBeGreaterThanOrEqual(-1000);
        expect(started.at - r.at).toBeLessThan(15_000);
      }
    }

    // an elastic job that cannot start yet shows its range, and holds nothing
    const waiting = { id: 'waiting', identity: identity('dan'), roles: [{ name: 'worker', count: 4, minCount: 2, resources: { cpu: 1000, memoryMb: 1024, gpus: 1 }, command: ['true'] }] };
    const sent = await muster(['submit', file('waiting.json', waiting)]);
    expect(sent.code, sent.stderr).toBe(0);
    await eventually(async () => (await jobs()).waiting?.reason === 'insufficient-resources', 15_000, 'waiting to be tried');
    expect((await jobs()).waiting).toMatchObject({ status: 'pending', size: 0, count: 4, minSize: 2 });
    expect(await jobsTableRow('waiting')).toMatch(/^waiting\s+pending\s+dan\s+training\s+0\s+2-4\s/);
    // (gone before urgent comes: a job ahead of train in the order would take what urgent frees)
    expect((await muster(['cancel', 'waiting'])).code).toBe(0);
    await eventually(async () => (await jobs()).waiting?.status === 'cancelled', 15_000, 'waiting to be cancelled');
  });

  it('a higher-priority job of its queue shrinks it: the agent stops exactly the members given up; when that job is done it grows back, the same members running anew', async () => {
    const before = running();
    const grown = resizes().length;
    const run = await muster(['submit', file('urgent.json', urgent), '--wait', '--wait-timeout', '30']);
    expect(run.code, run.stderr).toBe(0);
    await eventually(() => resizes().length > grown, 15_000, 'the shrink');
    expect(resizes()[grown]).toMatchObject({ members: 6, by: 'urgent' });
    // newest first: members 6 and 7 are given up, their processes end, the others run on
    await eventually(() => running().size === 6, 15_000, 'two members of train to stop');
    expect([...running().keys()].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    for (const m of [0, 1, 2, 3, 4, 5]) expect(running().get(m)?.pid).toBe(before.get(m)?.pid);
    const shrunk = (await jobs()).train;
    expect(shrunk).toMatchObject({ status: 'running', size: 6, count: 8 });
    expect(await resizeCount('shrunk')).toBe(1);

    // urgent runs 4 s; then train grows back by members 6 and 7, new processes of the same numbers
    await eventually(async () => (await jobs()).urgent?.status === 'succeeded', 30_000, 'urgent to finish');
    await eventually(() => running().size === 8, 30_000, 'train back at eight members');
    // (urgent's two members may finish apart: one growth of two, or two of one)
    const after = resizes().slice(grown + 1);
    expect(after.every((r) => r.by === undefined)).toBe(true);
    expect(after.at(-1)?.members).toBe(8);
    for (const m of [6, 7]) {
      expect(starts().filter((s) => s.member === m)).toHaveLength(2);
      expect(running().get(m)?.pid).not.toBe(before.get(m)?.pid);
    }
    expect(starts()).toHaveLength(10);
    expect((await jobs()).train).toMatchObject({ status: 'running', size: 8 });

    // cancelled, every process of the gang ends
    const cancel = await muster(['cancel', 'train']);
    expect(cancel.code, cancel.stderr).toBe(0);
    await eventually(() => running().size === 0, 20_000, 'every member of train to stop');
  }, 120_000);
});
