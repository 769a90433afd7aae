// An agent whose NATS node is cut off from its peers: its heartbeats reach no replica through that
// node (the server answers them "no responders"), so it moves to a node through which a replica
// hears them, within the scheduler's heartbeat timeout. Before, its node was lost for as long as the
// partition lasted (and every gang on it aborted), though its agent could reach the others.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLog } from '@muster/bus';
import { shardGet } from '@muster/core';
import type { NodeSpec } from '@muster/core';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { clusterWithCuttableRoutes, cut, isOn, openOn, stopCuttableCluster } from '../support/cuttableCluster.ts';
import type { CuttableCluster } from '../support/cuttableCluster.ts';
import { eventually } from '../support/schedulerProcess.ts';

const spec = (id: string): NodeSpec => ({ id, labels: {}, capacity: { cpu: 4000, memoryMb: 8192, slots: 4 }, gpus: [] });
const HEARTBEAT_TIMEOUT_MS = 8_000;

describe('an agent whose NATS node is cut off from its peers', () => {
  let setup: CuttableCluster | undefined;
  let scheduler: SchedulerHandle | undefined;
  let agent: Agent | undefined;
  const lines: string[] = [];

  beforeAll(async () => {
    setup = await clusterWithCuttableRoutes();
    const n1 = setup.bus.urls[0] as string;
    // the leader on n1 only: it stays on the side with quorum
    scheduler = await startScheduler({ natsUrl: n1, id: 's1', logger: pino({ level: 'silent' }), leaseMs: 1_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS, replicas: 3 });
    await eventually(() => scheduler?.role() === 'leader', 30_000, 'leadership');
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await scheduler?.stop();
    await stopCuttableCluster(setup);
  }, 60_000);

  it('moves to a node through which the leader hears its heartbeats, and its node is never lost', async () => {
    const { bus, links } = setup as CuttableCluster;
    const sched = scheduler as SchedulerHandle;
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const name = 'muster-agent un-1';
    agent = await openOn(bus, 2, name, () => startAgent({ natsUrl: bus.urls, nodes: [spec('un-1')], heartbeatMs: 250, logger, stopGraceMs: 500, simulate: true }));
    const status = (): string | undefined => shardGet(sched.state().nodes, 'un-1')?.status;
    await eventually(() => status() === 'up', 20_000, 'un-1 up');

    cut(links, 'n3');
    // 3 s of unheard heartbeats, a look at the other nodes, the reconnect: well within the timeout
    await eventually(async () => !(await isOn(bus, 2, name)), HEARTBEAT_TIMEOUT_MS, 'the agent off n3');
    expect(lines.some((l) => l.includes('"kind":"unheard"'))).toBe(true);
    // past the heartbeat timeout since the cut: the leader heard the node all along
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_TIMEOUT_MS + 2_000));
    expect(status()).toBe('up');
    // read through n1 (the test's own connection may be on the cut-off n3), again while a stream
    // whose leader was n3 elects another
    const reader = await bus.client({ name: 'log-reader', servers: [bus.urls[0] as string] });
    const lost = await eventually(async () => {
      const ids: string[] = [];
      for await (const { tx } of readLog(reader)) for (const e of tx.events) if (e.type === 'NodeLost') ids.push(e.nodeId);
      return ids;
    }, 30_000, 'the log read through n1');
    expect(lost).toEqual([]);
  }, 120_000);
});
