// A node the leader holds as lost comes back when its agent is alive: the leader answers the
// agent's heartbeat with {"status":"lost"} and the agent registers the node again. Before, a node
// lost while its heartbeats could not reach the leader (one NATS node cut off, a paused agent)
// stayed lost for good: its agent registered only when it started.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { publishInput, readLog, subjects } from '@muster/bus';
import { shardGet } from '@muster/core';
import type { NodeSpec } from '@muster/core';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { HeartbeatMonitor, LOST_ANSWER } from '@muster/scheduler';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';
import { startSingleLeader } from '../support/singleLeader.ts';
import type { SingleLeader } from '../support/singleLeader.ts';

const spec = (id: string): NodeSpec => ({ id, labels: {}, capacity: { cpu: 4000, memoryMb: 8192, slots: 4 }, gpus: [] });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a lost node whose agent still heartbeats', () => {
  it('is registered again by its agent once the leader answers its heartbeat', async () => {
    const leader: SingleLeader = await startSingleLeader([], { heartbeatTimeoutMs: 2_000 });
    cleanups.push(() => leader.stop());
    const dir = mkdtempSync(join(tmpdir(), 'muster-rejoin-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const agent: Agent = await startAgent({ natsUrl: [leader.url], nodes: [spec('rj-1')], heartbeatMs: 100, logger: pino({ level: 'silent' }), stopGraceMs: 500, stateDir: dir });
    cleanups.push(() => agent.stop());
    const status = (): string | undefined => shardGet(leader.scheduler.state().nodes, 'rj-1')?.status;
    await eventually(() => status() === 'up', 10_000, 'rj-1 up');

    // an operator's `lost` while the agent runs: the node is out, then back
    await publishInput(leader.bus, subjects.nodeInput('rj-1', 'lost'), {}, 'rj-1:lost:1');
    const events = await eventually(
      async () => {
        const seen: string[] = [];
        for await (const { tx } of readLog(leader.bus)) {
          for (const e of tx.events) {
            if ((e.type === 'NodeLost' && e.nodeId === 'rj-1') || (e.type === 'NodeRegistered' && e.node.id === 'rj-1')) seen.push(e.type);
          }
        }
        return seen.length >= 3 ? seen : null;
      },
      10_000,
      'rj-1 lost and registered again',
    );
    expect(events).toEqual(['NodeRegistered', 'NodeLost', 'NodeRegistered']);
    await eventually(() => status() === 'up', 10_000, 'rj-1 up again');
    // once back, its heartbeats are not answered, so it registers no more
    await new Promise((r) => setTimeout(r, 2_000));
    let registers = 0;
    for await (const { tx } of readLog(leader.bus)) for (const e of tx.events) if (e.type === 'NodeRegistered') registers++;
    expect(registers).toBe(2);
    expect(status()).toBe('up');
  }, 60_000);
});

describe('HeartbeatMonitor answers', () => {
  it('a heartbeat with a reply subject from a node named lost, and only while a leader lets it', async () => {
    const bus: TestBus = await startTestBus({ ensure: false });
    cleanups.push(() => bus.stop());
    const monitor = new HeartbeatMonitor(0);
    monitor.start(bus.bus);
    cleanups.push(async () => monitor.stop());
    const agentSide = await bus.client({ name: 'agent-side' });
    const answered: string[] = [];
    const inbox = agentSide.inbox();
    agentSide.subscribe(inbox, (m) => answered.push(m.text()));
    const beat = async (nodeId: string, reply?: string): Promise<void> => {
      agentSide.publish(subjects.heartbeat(nodeId), '{}', reply);
      await agentSide.flush();
      await bus.bus.flush();
      await agentSide.flush();
    };

    await beat('gone', inbox);
    expect(answered).toEqual([]);
    monitor.answerLost((id) => id === 'gone');
    await beat('here', inbox);
    await beat('gone');
    expect(answered).toEqual([]);
    await beat('gone', inbox);
    await eventually(() => answered.length === 1, 5_000, 'an answer');
    expect(answered).toEqual([LOST_ANSWER]);
    monitor.answerLost(null);
    await beat('gone', inbox);
    expect(answered).toEqual([LOST_ANSWER]);
  });
});
