// Node liveness counts only what the leader could hear. A leader whose own connection to NATS is
// down hears no heartbeat, and agents cut off by the same outage come back a moment after it: the
// silence of either is not a node's. nats-server stopped for 15 s and started again on its store,
// with one leader (keeping its lease: no other replica) and live agents: no node is lost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, readLog } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { shardGet } from '@muster/core';
import type { NodeSpec } from '@muster/core';
import { startAgent } from '@muster/agent';
import { startScheduler } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import { eventually } from '../support/schedulerProcess.ts';

const spec = (id: string): NodeSpec => ({ id, labels: {}, capacity: { cpu: 4000, memoryMb: 8192, slots: 4 }, gpus: [] });
const OUTAGE_MS = 15_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every NodeLost in the log, and the term of each LeaderElected. */
async function lostAndTerms(bus: Bus): Promise<{ lost: string[]; terms: number[] }> {
  const lost: string[] = [];
  const terms: number[] = [];
  for await (const { tx } of readLog(bus)) {
    for (const e of tx.events) {
      if (e.type === 'NodeLost') lost.push(e.nodeId);
      if (e.type === 'LeaderElected') terms.push(tx.term);
    }
  }
  return { lost, terms };
}

describe('a NATS outage under a leader that keeps its lease', () => {
  it('loses no node whose agent is alive: silence while the leader could not hear is not counted', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const scheduler = await startScheduler({ natsUrl: server.url, id: 's1', logger: pino({ level: 'silent' }), leaseMs: 1_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS, snapshotEvery: 0 });
    cleanups.push(() => scheduler.stop());
    await eventually(() => scheduler.role() === 'leader', 10_000, 'leadership');
    const dir = mkdtempSync(join(tmpdir(), 'muster-outage-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const agent = await startAgent({ natsUrl: [server.url], nodes: [spec('o-1'), spec('o-2')], heartbeatMs: 200, logger: pino({ level: 'silent' }), stopGraceMs: 500, stateDir: dir });
    cleanups.push(() => agent.stop());
    const up = (): boolean => ['o-1', 'o-2'].every((id) => shardGet(scheduler.state().nodes, id)?.status === 'up');
    await eventually(() => up(), 10_000, 'both nodes up');

    await server.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await server.restart();
    // the agents reconnect and beat again; give the leader several heartbeat timeouts to judge them
    await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_TIMEOUT_MS));

    const bus = await connect({ servers: server.url, name: 'test' });
    cleanups.push(() => bus.close());
    const { lost, terms } = await lostAndTerms(bus);
    expect(lost).toEqual([]);
    // the case that can happen: the same leader, in the same term, before and after the outage
    expect(terms).toHaveLength(1);
    expect(scheduler.role()).toBe('leader');
    expect(up()).toBe(true);
  }, 90_000);
});
