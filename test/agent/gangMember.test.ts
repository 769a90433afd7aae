// A gang's member as the agent runs it (DESIGN.md §15), against a real nats-server: the environment
// and files built from the bind's gang (the same for a simulated member), the exit code, signal and
// attempt in its `done`, its whole process group killed by a Stop, and its output lines published
// on MUSTER_OUTPUT as well as written to its file.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { readInputs, readOutput } from '@muster/bus';
import type { BindMessage, GangLayout, NodeSpec, StopMessage } from '@muster/core';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

const logger = pino({ level: 'silent' });

const node = (id: string): NodeSpec => ({
  id,
  labels: {},
  capacity: { cpu: 8000, memoryMb: 16384 },
  gpus: [0, 1].map((g) => ({ id: g, memoryMb: 16384, model: 'T4', nvlinkDomain: 0 })),
});

/** A gang of 3: members 0 and 2 on `here`, member 1 elsewhere. */
const gangOf = (here: string, attempt: number): GangLayout => ({
  attempt,
  size: 3,
  rendezvous: { node: here, address: '127.0.0.1', port: 29517 },
  members: [
    { member: 0, role: 'w', node: here, address: '127.0.0.1', gpuIds: [0] },
    { member: 1, role: 'w', node: 'other', address: '10.1.2.3', gpuIds: [0] },
    { member: 2, role: 'w', node: here, address: '127.0.0.1', gpuIds: [1] },
  ],
});

describe('a gang member on a real agent', () => {
  let bus: TestBus;
  let dir: string;
  const agents: Agent[] = [];
  let seq = 0;

  const start = async (nodeId: string, simulate = false): Promise<Agent> => {
    const agent = await startAgent({ natsUrl: bus.urls, nodes: [node(nodeId)], address: '127.0.0.1', heartbeatMs: 100, logger, stopGraceMs: 500, stateDir: join(dir, nodeId), simulate, outputLimits: { flushMs: 50 } });
    agents.push(agent);
    return agent;
  };

  const publish = async (subject: string, body: BindMessage | StopMessage): Promise<void> => {
    seq += 1;
    await bus.admin.publish(subject, JSON.stringify(body), { msgId: `muster:${seq}:0` });
  };

  const bind = (nodeId: string, jobId: string, command: string | undefined, attempt = 0, session = 1): BindMessage => ({
    type: 'Bind',
    jobId,
    session,
    at: 1,
    runtimeMs: 60_000,
    gang: gangOf(nodeId, attempt),
    parts: [
      {
        role: 'w',
        members: [0, 2],
        gpuIds: [0, 1],
        memberGpuIds: [[0], [1]],
        resources: { cpu: 200, memoryMb: 128, gpus: 2 },
        ...(command === undefined ? {} : { command }),
        env: { OUT_DIR: dir },
      },
    ],
  });

  const doneBodies = async (nodeId: string, jobId: string, count: number): Promise<Record<string, unknown>[]> =>
    eventually(async () => {
      const all: Record<string, unknown>[] = [];
      for await (const input of readInputs(bus.bus)) {
        if (input.subject !== `muster.in.node.${nodeId}.done`) continue;
        const body = JSON.parse(input.data) as Record<string, unknown>;
        if (body.jobId === jobId) all.push(body);
      }
      return all.length >= count ? all.sort((a, b) => (a.member as number) - (b.member as number)) : null;
    }, 15_000, `${count} done input(s) of ${jobId}`);

  beforeAll(async () => {
    bus = await startTestBus();
    dir = mkdtempSync(join(tmpdir(), 'muster-gang-member-'));
  });

  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  afterAll(async () => {
    await bus?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs each member with the §15 environment and its gang files in place, and reports exit code, signal and attempt', async () => {
    await start('g-1');
    const script = 'env | grep -E "^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|NNODES|MASTER_ADDR|MASTER_PORT|MUSTER_ATTEMPT|MUSTER_ROLE_RANK|MUSTER_ROLE_SIZE)=" | sort > "$OUT_DIR/env-$MUSTER_MEMBER"; cat "$MUSTER_HOSTFILE" > "$OUT_DIR/hosts-$MUSTER_MEMBER"; cp "$MUSTER_GANG_FILE" "$OUT_DIR/gang-$MUSTER_MEMBER"; [ "$RANK" = 0 ] || kill -TERM $$';
    await publish('muster.bind.g-1', bind('g-1', 'job-env', script, 2));
    const done = await doneBodies('g-1', 'job-env', 2);
    expect(done).toEqual([
      { jobId: 'job-env', member: 0, ok: true, exitCode: 0, attempt: 2 },
      { jobId: 'job-env', member: 2, ok: false, signal: 'SIGTERM', attempt: 2 },
    ]);
    expect(readFileSync(join(dir, 'env-2'), 'utf8').trim().split('\n')).toEqual(
      ['LOCAL_RANK=1', 'LOCAL_WORLD_SIZE=2', 'MASTER_ADDR=127.0.0.1', 'MASTER_PORT=29517', 'MUSTER_ATTEMPT=2', 'MUSTER_ROLE_RANK=2', 'MUSTER_ROLE_SIZE=3', 'NNODES=2', 'NODE_RANK=0', 'RANK=2', 'WORLD_SIZE=3'],
    );
    expect(readFileSync(join(dir, 'hosts-0'), 'utf8')).toBe('127.0.0.1 slots=2\n10.1.2.3 slots=1\n');
    expect(JSON.parse(readFileSync(join(dir, 'gang-0'), 'utf8'))).toEqual({ jobId: 'job-env', ...gangOf('g-1', 2) });
  });

  it('gives a simulated member the same environment (without running anything)', async () => {
    const agent = await start('g-sim', true);
    await publish('muster.bind.g-sim', bind('g-sim', 'job-sim', 'exit 1', 1));
    const env = await eventually(() => agent.memberEnv('g-sim', 'job-sim', 2) ?? null, 10_000, 'the simulated member to start');
    expect(env).toMatchObject({ RANK: '2', WORLD_SIZE: '3', LOCAL_RANK: '1', NODE_RANK: '0', NNODES: '2', MASTER_PORT: '29517', MUSTER_ATTEMPT: '1', CUDA_VISIBLE_DEVICES: '1' });
    expect(env.MUSTER_HOSTFILE).toMatch(/gangs\/job-sim\.1\/hostfile$/);
  });

  it('a member added by an elastic growth sees the size after the growth; the running ones keep the size they started with', async () => {
    const agent = await start('g-grow', true);
    const first: BindMessage = { ...bind('g-grow', 'job-grow', undefined), gang: { ...gangOf('g-grow', 0), size: 2, members: gangOf('g-grow', 0).members.filter((m) => m.member !== 2) } };
    first.parts = [{ ...first.parts[0]!, members: [0], gpuIds: [0], memberGpuIds: [[0]] }];
    await publish('muster.bind.g-grow', first);
    await eventually(() => agent.memberEnv('g-grow', 'job-grow', 0) ?? null, 10_000, 'member 0 to start');
    const grown: BindMessage = { ...bind('g-grow', 'job-grow', undefined, 0, 2) };
    grown.parts = [{ ...grown.parts[0]!, members: [2], gpuIds: [1], memberGpuIds: [[1]] }];
    await publish('muster.bind.g-grow', grown);
    const added = await eventually(() => agent.memberEnv('g-grow', 'job-grow', 2) ?? null, 10_000, 'member 2 to start');
    expect(added).toMatchObject({ WORLD_SIZE: '3', LOCAL_RANK: '1', LOCAL_WORLD_SIZE: '2' });
    expect(added.MUSTER_HOSTFILE).toMatch(/job-grow\.2\/hostfile$/);
    expect(agent.memberEnv('g-grow', 'job-grow', 0)).toMatchObject({ WORLD_SIZE: '2', LOCAL_WORLD_SIZE: '1' });
  });

  it("a Stop kills the member's whole process group, children included, and reports nothing", async () => {
    const agent = await start('g-stop');
    const script = 'sleep 60 & echo $! > "$OUT_DIR/child-$MUSTER_MEMBER"; wait';
    await publish('muster.bind.g-stop', bind('g-stop', 'job-stop', script));
    const children = await eventually(
      () => {
        const files = [0, 2].map((m) => join(dir, `child-${m}`));
        return files.every((f) => existsSync(f) && readFileSync(f, 'utf8').trim() !== '') ? files.map((f) => Number(readFileSync(f, 'utf8'))) : null;
      },
      10_000,
      'both members to start their child',
    );
    expect(children.every(isAlive)).toBe(true);
    await publish('muster.stop.g-stop', { type: 'Stop', jobId: 'job-stop', members: [0, 2], reason: 'member-failed' });
    await eventually(() => children.every((pid) => !isAlive(pid)), 5_000, 'the children to die with their members');
    expect(agent.running()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    let done = 0;
    for await (const input of readInputs(bus.bus)) if (input.subject === 'muster.in.node.g-stop.done') done += 1;
    expect(done).toBe(0);
  });

  it("publishes every line of a member's stdout and stderr on muster.out.<node>.<job>.<member>, and writes its file", async () => {
    const agent = await start('g-out');
    const script = 'for i in 1 2 3; do echo "out $MUSTER_MEMBER $i"; done; echo "err $MUSTER_MEMBER" >&2; printf "no newline $MUSTER_MEMBER"';
    await publish('muster.bind.g-out', bind('g-out', 'job-out', script, 1));
    await doneBodies('g-out', 'job-out', 2);
    const batches = await eventually(async () => {
      const got: { subject: string; body: { attempt: number; stream: string; lines: string[] } }[] = [];
      for await (const m of readOutput(bus.bus, 'job-out')) got.push({ subject: m.subject, body: JSON.parse(new TextDecoder().decode(m.data)) as never });
      const lines = got.flatMap((g) => g.body.lines);
      return lines.length >= 10 ? got : null;
    }, 10_000, 'the output of both members');
    const of = (member: number, stream: string): string[] =>
      batches.filter((b) => b.subject === `muster.out.g-out.job-out.${member}` && b.body.stream === stream).flatMap((b) => b.body.lines);
    expect(of(0, 'stdout')).toEqual(['out 0 1', 'out 0 2', 'out 0 3', 'no newline 0']);
    expect(of(2, 'stderr')).toEqual(['err 2']);
    expect(batches.every((b) => b.body.attempt === 1)).toBe(true);
    expect(readFileSync(join(dir, 'g-out', 'logs', 'job-out.2.out'), 'utf8')).toContain('out 2 3\n');
    expect(agent.outputCounts()).toEqual({ publishedLines: 10, droppedLines: 0 });
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
