// The node agent against a real nats-server: it registers, heartbeats, runs what is bound to its
// node (real processes with their GPU ids, or simulated members), reports exits, obeys stops, and
// after a restart does not run a finished member again.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { readInputs } from '@muster/bus';
import type { InputMessage } from '@muster/bus';
import type { BindMessage, NodeSpec, StopMessage } from '@muster/core';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { hostAddress } from '@muster/agent/testing';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

const logger = pino({ level: 'silent' });

const node = (id: string): NodeSpec => ({
  id,
  labels: { zone: 'a' },
  capacity: { cpu: 8000, memoryMb: 16384, slots: 8 },
  gpus: [0, 1, 2, 3].map((g) => ({ id: g, memoryMb: 16384, model: 'T4', nvlinkDomain: 0 })),
});

describe('node agent on a real nats-server', () => {
  let bus: TestBus;
  let dir: string;
  const agents: Agent[] = [];
  let seq = 0;

  const start = async (nodeId: string, extra: { simulate?: boolean; stateDir?: string; deviceWaitMs?: number } = {}): Promise<Agent> => {
    const agent = await startAgent({
      natsUrl: bus.urls,
      nodes: [node(nodeId)],
      heartbeatMs: 100,
      logger,
      stopGraceMs: 1_500,
      stateDir: extra.stateDir ?? join(dir, nodeId),
      ...(extra.simulate === undefined ? {} : { simulate: extra.simulate }),
      ...(extra.deviceWaitMs === undefined ? {} : { deviceWaitMs: extra.deviceWaitMs }),
    });
    agents.push(agent);
    return agent;
  };

  const publish = async (subject: string, body: BindMessage | StopMessage): Promise<void> => {
    seq += 1;
    await bus.admin.publish(subject, JSON.stringify(body), { msgId: `muster:${seq}:0` });
  };

  const bind = (jobId: string, command: string[] | string | undefined, members = [0], extra: Partial<BindMessage> = {}): BindMessage => ({
    type: 'Bind',
    jobId,
    session: 1,
    at: 1,
    parts: [
      {
        role: 'worker',
        members,
        gpuIds: members.flatMap((_, i) => [i * 2 + 1, i * 2 + 2].filter((g) => g < 4)),
        memberGpuIds: members.map((_, i) => [i * 2 + 1, i * 2 + 2].filter((g) => g < 4)),
        resources: { cpu: 100 * members.length, memoryMb: 64 * members.length, gpus: 2 * members.length },
        ...(command === undefined ? {} : { command }),
        env: { OUT_DIR: dir, GREETING: 'hello' },
      },
    ],
    ...extra,
  });

  const inputs = async (subject: string): Promise<InputMessage[]> => {
    const all: InputMessage[] = [];
    for await (const input of readInputs(bus.bus)) if (input.subject === subject) all.push(input);
    return all;
  };

  const doneInputs = async (nodeId: string, jobId: string, count: number): Promise<{ jobId: string; member: number; ok: boolean }[]> =>
    eventually(async () => {
      const bodies = (await inputs(`muster.in.node.${nodeId}.done`))
        .map((i) => JSON.parse(i.data) as { jobId: string; member: number; ok: boolean })
        .filter((b) => b.jobId === jobId);
      return bodies.length >= count ? bodies : null;
    }, 15_000, `${count} done input(s) of ${jobId} from ${nodeId}`);

  beforeAll(async () => {
    bus = await startTestBus();
    dir = mkdtempSync(join(tmpdir(), 'muster-agent-test-'));
  });

  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  afterAll(async () => {
    await bus?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("registers its node with the NodeSpec as the body (its address the host's by default) and a per-boot msg id", async () => {
    const agent = await start('reg-1');
    await agent.registered;
    const registers = await inputs('muster.in.node.reg-1.register');
    expect(registers).toHaveLength(1);
    expect(JSON.parse(registers[0]!.data)).toEqual({ ...node('reg-1'), address: hostAddress() });
    expect(registers[0]!.msgId).toMatch(/^reg-1:register:[0-9a-f]+:1$/);
  });

  it('heartbeats {} on core NATS muster.hb.<nodeId>', async () => {
    const bodies: string[] = [];
    const three = new Promise<void>((resolve) => {
      const sub = bus.bus.subscribe('muster.hb.hb-1', (m) => {
        if (bodies.push(m.text()) < 3) return;
        sub.unsubscribe();
        resolve();
      });
    });
    await bus.bus.flush();
    const started = Date.now();
    await start('hb-1');
    await three;
    expect(bodies).toEqual(['{}', '{}', '{}']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('runs a bound command with its environment and GPU ids, and reports ok:true', async () => {
    await start('run-1');
    const script = 'echo "$CUDA_VISIBLE_DEVICES|$MUSTER_JOB_ID|$MUSTER_MEMBER|$MUSTER_ROLE|$MUSTER_NODE|$GREETING" > "$OUT_DIR/out-run-$MUSTER_MEMBER"';
    await publish('muster.bind.run-1', bind('job-run', ['sh', '-c', script], [0, 1]));
    const done = await doneInputs('run-1', 'job-run', 2);
    expect(done.sort((a, b) => a.member - b.member)).toEqual([
      { jobId: 'job-run', member: 0, ok: true, exitCode: 0 },
      { jobId: 'job-run', member: 1, ok: true, exitCode: 0 },
    ]);
    expect(readFileSync(join(dir, 'out-run-0'), 'utf8')).toBe('1,2|job-run|0|worker|run-1|hello\n');
    expect(readFileSync(join(dir, 'out-run-1'), 'utf8')).toBe('3|job-run|1|worker|run-1|hello\n');
  });

  it('gives a member without GPUs an empty CUDA_VISIBLE_DEVICES', async () => {
    await start('cpu-1');
    const b = bind('job-cpu', 'echo "[$CUDA_VISIBLE_DEVICES]" > "$OUT_DIR/cpu-out"');
    b.parts[0] = { ...b.parts[0]!, gpuIds: [], memberGpuIds: [[]], resources: { cpu: 100, memoryMb: 64, gpus: 0 } };
    await publish('muster.bind.cpu-1', b);
    await doneInputs('cpu-1', 'job-cpu', 1);
    expect(readFileSync(join(dir, 'cpu-out'), 'utf8')).toBe('[]\n');
  });

  it('reports ok:false for a command that fails or cannot start', async () => {
    await start('fail-1');
    await publish('muster.bind.fail-1', bind('job-fail', 'exit 3'));
    await publish('muster.bind.fail-1', bind('job-nocmd', ['/nonexistent/program']));
    expect(await doneInputs('fail-1', 'job-fail', 1)).toEqual([{ jobId: 'job-fail', member: 0, ok: false, exitCode: 3 }]);
    expect(await doneInputs('fail-1', 'job-nocmd', 1)).toEqual([{ jobId: 'job-nocmd', member: 0, ok: false }]);
  });

  it('kills a member on Stop and reports nothing for it', async () => {
    const agent = await start('stop-1');
    const pidFile = join(dir, 'stop-pid');
    await publish('muster.bind.stop-1', bind('job-stop', `echo $$ > "${pidFile}"; exec sleep 60`));
    const pid = await eventually(() => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '' ? Number(readFileSync(pidFile, 'utf8')) : null), 10_000, 'the member to start');
    expect(agent.running()).toBe(1);
    await publish('muster.stop.stop-1', { type: 'Stop', jobId: 'job-stop', members: [0], reason: 'cancelled' });
    await eventually(() => !isAlive(pid), 10_000, 'the member process to die');
    expect(agent.running()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(await inputs('muster.in.node.stop-1.done')).toHaveLength(0);
  });

  it('simulates members: commands are not run, each finishes after runtimeMs', async () => {
    await start('sim-x', { simulate: true });
    const marker = join(dir, 'must-not-exist');
    const started = Date.now();
    await publish('muster.bind.sim-x', bind('job-sim', `touch "${marker}"`, [0, 1], { runtimeMs: 300 }));
    const done = await doneInputs('sim-x', 'job-sim', 2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(done.every((d) => d.ok)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('does not run a member whose bind was already stopped when the agent came', async () => {
    const marker = join(dir, 'pre-stopped-ran');
    await publish('muster.bind.pre-1', bind('job-pre', `touch "${marker}"`));
    await publish('muster.stop.pre-1', { type: 'Stop', jobId: 'job-pre', members: [0], reason: 'node-lost' });
    // the same member bound again by a later commit does run
    await publish('muster.bind.pre-1', bind('job-pre', 'true', [0], { session: 2 }));
    await start('pre-1');
    expect(await doneInputs('pre-1', 'job-pre', 1)).toEqual([{ jobId: 'job-pre', member: 0, ok: true, exitCode: 0 }]);
    expect(existsSync(marker)).toBe(false);
  });

  it('after a restart re-reads its binds but does not run a finished or stopped member again', async () => {
    const stateDir = join(dir, 'restart-state');
    const counter = join(dir, 'restart-count');
    const first = await start('re-1', { stateDir });
    await publish('muster.bind.re-1', bind('job-once', `echo run >> "${counter}"`));
    await doneInputs('re-1', 'job-once', 1);
    await publish('muster.bind.re-1', bind('job-stopped', 'exec sleep 60'));
    await eventually(() => first.running() === 1, 10_000, 'the second member to start');
    await publish('muster.stop.re-1', { type: 'Stop', jobId: 'job-stopped', members: [0], reason: 'cancelled' });
    await eventually(() => first.running() === 0, 10_000, 'the stop');
    await first.stop();
    agents.splice(agents.indexOf(first), 1);

    const second = await start('re-1', { stateDir });
    await second.registered;
    // a bind published after the restart is run: proof that the replay has gone past the old ones
    await publish('muster.bind.re-1', bind('job-after', 'true'));
    await doneInputs('re-1', 'job-after', 1);
    expect(second.running()).toBe(0);
    expect(readFileSync(counter, 'utf8')).toBe('run\n');
    expect(await inputs('muster.in.node.re-1.done')).toHaveLength(2);
  });

  describe('an elastic gang (DESIGN.md §13): Binds for the members added, Stops for those given up', () => {
    // each process of a member appends "<member> started <pid>" and, on SIGTERM, after 400 ms, "<member> exited <pid>"
    const member = (log: string) => `trap 'sleep 0.4; echo "$MUSTER_MEMBER exited $$" >> "${log}"; exit 0' TERM; echo "$MUSTER_MEMBER started $$" >> "${log}"; while true; do sleep 0.05; done`;
    const lines = (log: string): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
    const pidsOf = (log: string, what: 'started' | 'exited', m: number): number[] => lines(log).filter((l) => l.startsWith(`${m} ${what} `)).map((l) => Number(l.split(' ')[2]));
    const cpuOnly = (b: BindMessage): BindMessage => ({ ...b, parts: b.parts.map((p) => ({ ...p, gpuIds: [], memberGpuIds: p.members.map(() => []), resources: { cpu: 100 * p.members.length, memoryMb: 64 * p.members.length, gpus: 0 } })) });

    it('a second Bind for a running job starts the added members beside the running ones; a Stop stops only its members', async () => {
      const agent = await start('el-1');
      const log = join(dir, 'el-1.log');
      await publish('muster.bind.el-1', cpuOnly(bind('elastic', member(log), [0, 1])));
      await eventually(() => agent.running() === 2 && lines(log).length === 2, 10_000, 'members 0 and 1 to start');
      // the gang grew by members 2 and 3 in a later session: a Bind with only those
      await publish('muster.bind.el-1', cpuOnly(bind('elastic', member(log), [2, 3], { session: 2 })));
      await eventually(() => agent.running() === 4 && lines(log).length === 4, 10_000, 'members 2 and 3 to start');
      expect([0, 1, 2, 3].map((m) => pidsOf(log, 'started', m).length)).toEqual([1, 1, 1, 1]);
      // a preemption takes member 3 back
      await publish('muster.stop.el-1', { type: 'Stop', jobId: 'elastic', members: [3], reason: 'preempted' });
      await eventually(() => pidsOf(log, 'exited', 3).length === 1, 10_000, 'member 3 to exit');
      expect(agent.running()).toBe(3);
      expect([0, 1, 2].map((m) => isAlive(pidsOf(log, 'started', m)[0]!))).toEqual([true, true, true]);
      expect(lines(log).filter((l) => l.includes('exited'))).toEqual([`3 exited ${pidsOf(log, 'started', 3)[0]}`]);
      // nothing is reported for a member given up
      expect(await inputs('muster.in.node.el-1.done')).toHaveLength(0);
    });

    it('a member number bound again after its Stop runs anew, once its old process has exited', async () => {
      const agent = await start('el-2');
      const log = join(dir, 'el-2.log');
      await publish('muster.bind.el-2', cpuOnly(bind('regrow', member(log), [0, 1])));
      await eventually(() => agent.running() === 2 && lines(log).length === 2, 10_000, 'members 0 and 1 to start');
      // shrunk by member 1, then grown again by member 1 in a later session, at once: the old
      // process takes 400 ms to exit after SIGTERM, and the new one must not run beside it
      await publish('muster.stop.el-2', { type: 'Stop', jobId: 'regrow', members: [1], reason: 'preempted' });
      await publish('muster.bind.el-2', cpuOnly(bind('regrow', member(log), [1], { session: 3 })));
      await eventually(() => pidsOf(log, 'started', 1).length === 2, 10_000, 'member 1 to start again');
      const [oldPid, newPid] = pidsOf(log, 'started', 1);
      expect(newPid).not.toBe(oldPid);
      expect(lines(log).filter((l) => l.startsWith('1 '))).toEqual([`1 started ${oldPid}`, `1 exited ${oldPid}`, `1 started ${newPid}`]);
      expect(isAlive(newPid!)).toBe(true);
      expect(agent.running()).toBe(2);
      // the new process is the member now: a Stop of it ends it, and member 0 runs on
      await publish('muster.stop.el-2', { type: 'Stop', jobId: 'regrow', members: [1], reason: 'preempted' });
      await eventually(() => !isAlive(newPid!), 10_000, 'the new member 1 to die');
      expect(isAlive(pidsOf(log, 'started', 0)[0]!)).toBe(true);
      expect(agent.running()).toBe(1);
    });

    it('after a restart, a member stopped and bound again runs once, in its latest bind', async () => {
      const stateDir = join(dir, 'el-3-state');
      const counter = join(dir, 'el-3-count');
      const first = await start('el-3', { stateDir });
      await publish('muster.bind.el-3', cpuOnly(bind('again', `echo "$MUSTER_MEMBER" >> "${counter}"; exec sleep 60`, [0, 1])));
      await eventually(() => first.running() === 2, 10_000, 'both members to start');
      // both have written their line (a Stop right after the spawn could end a member before its echo)
      await eventually(() => existsSync(counter) && readFileSync(counter, 'utf8').trim().split('\n').length === 2, 10_000, 'both members to write');
      await publish('muster.stop.el-3', { type: 'Stop', jobId: 'again', members: [1], reason: 'preempted' });
      await eventually(() => first.running() === 1, 10_000, 'member 1 to stop');
      await publish('muster.bind.el-3', cpuOnly(bind('again', `echo "$MUSTER_MEMBER" >> "${counter}"; exit 0`, [1], { session: 4 })));
      expect(await doneInputs('el-3', 'again', 1)).toEqual([{ jobId: 'again', member: 1, ok: true, exitCode: 0 }]);
      await first.stop();
      agents.splice(agents.indexOf(first), 1);
      // the restarted agent re-reads both binds and the stop: member 0 runs again (the first agent's stop ended it), member 1 does not
      const second = await start('el-3', { stateDir });
      await second.registered;
      await eventually(() => second.running() === 1, 10_000, 'member 0 to run again');
      await new Promise((r) => setTimeout(r, 300));
      expect(readFileSync(counter, 'utf8').trim().split('\n').sort()).toEqual(['0', '0', '1', '1']);
      expect(await inputs('muster.in.node.el-3.done')).toHaveLength(1);
    });
  });

  describe('a member starts on a GPU device only after the members stopped there have exited (DESIGN.md §12)', () => {
    // the old member takes 400 ms to exit after SIGTERM (within the 1.5 s grace, which a loaded machine needs), writing to a shared log as it goes
    const slowExit = (log: string, name: string) => `trap 'sleep 0.4; echo "${name} exited" >> "${log}"; exit 0' TERM; echo "${name} started" >> "${log}"; while true; do sleep 0.05; done`;
    const quick = (log: string, name: string) => `echo "${name} started" >> "${log}"`;
    const lines = (log: string): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
    const onGpu = (b: BindMessage, gpus: number[]): BindMessage => ({ ...b, parts: [{ ...b.parts[0]!, gpuIds: gpus, memberGpuIds: [gpus] }] });

    it('a Stop then a Bind for the same devices: the new member starts after the stopped one has exited', async () => {
      const agent = await start('dev-1');
      const log = join(dir, 'dev-1.log');
      await publish('muster.bind.dev-1', bind('victim', slowExit(log, 'victim')));
      await eventually(() => lines(log).includes('victim started'), 10_000, 'the victim to start');
      await publish('muster.stop.dev-1', { type: 'Stop', jobId: 'victim', members: [0], reason: 'preempted' });
      await publish('muster.bind.dev-1', bind('preemptor', quick(log, 'preemptor')));
      expect(await doneInputs('dev-1', 'preemptor', 1)).toEqual([{ jobId: 'preemptor', member: 0, ok: true, exitCode: 0 }]);
      expect(lines(log)).toEqual(['victim started', 'victim exited', 'preemptor started']);
      expect(agent.running()).toBe(0);
      // the stopped victim is reported by no one: the scheduler released it already
      expect((await inputs('muster.in.node.dev-1.done')).map((i) => (JSON.parse(i.data) as { jobId: string }).jobId)).toEqual(['preemptor']);
    });

    it('a Bind that comes before the Stop of the member on its devices waits for that member to exit', async () => {
      await start('dev-2');
      const log = join(dir, 'dev-2.log');
      await publish('muster.bind.dev-2', bind('victim', slowExit(log, 'victim')));
      await eventually(() => lines(log).includes('victim started'), 10_000, 'the victim to start');
      // binds and stops come through two consumers: the preemptor's bind can be read first
      await publish('muster.bind.dev-2', bind('preemptor', quick(log, 'preemptor')));
      // a member on other devices does not wait
      await publish('muster.bind.dev-2', onGpu(bind('elsewhere', quick(log, 'elsewhere')), [0]));
      await doneInputs('dev-2', 'elsewhere', 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(lines(log)).toEqual(['victim started', 'elsewhere started']);
      await publish('muster.stop.dev-2', { type: 'Stop', jobId: 'victim', members: [0], reason: 'preempted' });
      await doneInputs('dev-2', 'preemptor', 1);
      expect(lines(log)).toEqual(['victim started', 'elsewhere started', 'victim exited', 'preemptor started']);
    });

    it('a member stopped while it waits for its devices never starts', async () => {
      const agent = await start('dev-3');
      const log = join(dir, 'dev-3.log');
      await publish('muster.bind.dev-3', bind('holder', slowExit(log, 'holder')));
      await eventually(() => lines(log).includes('holder started'), 10_000, 'the holder to start');
      await publish('muster.bind.dev-3', bind('waiter', quick(log, 'waiter')));
      await new Promise((r) => setTimeout(r, 200));
      expect(agent.running()).toBe(1);
      await publish('muster.stop.dev-3', { type: 'Stop', jobId: 'waiter', members: [0], reason: 'cancelled' });
      await publish('muster.stop.dev-3', { type: 'Stop', jobId: 'holder', members: [0], reason: 'preempted' });
      await eventually(() => lines(log).includes('holder exited'), 10_000, 'the holder to exit');
      await new Promise((r) => setTimeout(r, 500));
      expect(lines(log)).toEqual(['holder started', 'holder exited']);
      expect(agent.running()).toBe(0);
      expect(await inputs('muster.in.node.dev-3.done')).toHaveLength(0);
    });

    it('the wait is bounded: after deviceWaitMs the member starts even though the holder still runs', async () => {
      await start('dev-4', { deviceWaitMs: 700 });
      const log = join(dir, 'dev-4.log');
      const pidFile = join(dir, 'dev-4.pid');
      await publish('muster.bind.dev-4', bind('stuck', `echo $$ > "${pidFile}"; exec sleep 60`));
      const pid = await eventually(() => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '' ? Number(readFileSync(pidFile, 'utf8')) : null), 10_000, 'the holder to start');
      const sent = Date.now();
      await publish('muster.bind.dev-4', bind('late', quick(log, 'late')));
      await doneInputs('dev-4', 'late', 1);
      expect(Date.now() - sent).toBeGreaterThanOrEqual(650);
      expect(isAlive(pid)).toBe(true);
    });
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
