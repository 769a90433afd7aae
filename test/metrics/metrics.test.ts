// /metrics on every replica, as users run them (scheduler processes, --metrics-port through
// MUSTER_METRICS_PORT, a simulated agent process): every name of DESIGN.md §14 is there, the
// values agree with what the API says (muster jobs, muster nodes), no label carries a job or node
// id, and a standby exports its role and its lag (0 once it has folded what the leader wrote).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from '@muster/client';
import type { MusterClient } from '@muster/client';
import { createStack, freePort } from '@muster/stack';
import type { NatsServerHandle, Stack } from '@muster/stack';
import { eventually } from '../support/schedulerProcess.ts';
import { parse, value } from './promText.ts';
import type { Sample } from './promText.ts';

const NAMES = [
  'muster_jobs',
  'muster_pending_jobs',
  'muster_decisions_total',
  'muster_session_seconds',
  'muster_submit_to_decision_seconds',
  'muster_replica_leader',
  'muster_term',
  'muster_log_sequence',
  'muster_log_lag_transactions',
  'muster_nodes',
  'muster_allocated',
  'muster_capacity',
  'muster_queue_used',
  'muster_queue_guaranteed',
  'muster_reservations',
];

describe('Prometheus metrics on every replica', () => {
  let stack: Stack;
  let client: MusterClient;
  let nats: NatsServerHandle;
  const ports: Record<string, number> = {};

  const scrape = async (id: string): Promise<Sample[]> => {
    const res = await fetch(`http://127.0.0.1:${ports[id]}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return parse(await res.text());
  };

  beforeAll(async () => {
    stack = createStack({ graceMs: 3000 });
    nats = await stack.startNatsServer();
    for (const id of ['m1', 'm2']) {
      ports[id] = await freePort();
      stack.spawnScheduler({ id, urls: [nats.url], leaseMs: 1000, logLevel: 'info', env: { ...process.env, MUSTER_METRICS_PORT: String(ports[id]) } });
      if (id === 'm1') {
        // m1 leads: it is up before m2 starts
        await eventually(async () => value(await scrape('m1'), 'muster_replica_leader') === 1, 60_000, 'm1 to lead');
      }
    }
    // m2 serves metrics once rebuilt; it counts decisions from then on, so the workload comes after
    await eventually(async () => value(await scrape('m2'), 'muster_replica_leader') === 0, 60_000, 'm2 to stand by');
    stack.spawnAgent({ urls: [nats.url], simulate: 3, heartbeatMs: 500 });
    client = await connectClient(nats.url, { timeoutMs: 2000 });
    await eventually(async () => (await client.nodes()).filter((n) => n.status === 'up').length === 3, 30_000, 'three nodes up');
    const identity = { user: 'alice', queue: 'default', project: 'm' };
    await client.submit({ id: 'gpu-gang', identity, tasks: 2, resources: { cpu: 1000, memoryMb: 1024, gpus: 2 }, runtimeMs: 600_000 });
    await client.submit({ id: 'quick', identity, tasks: 1, resources: { cpu: 500, memoryMb: 256 }, runtimeMs: 200 });
    await client.submit({ id: 'nowhere', identity, tasks: 1, resources: { cpu: 500, memoryMb: 256 }, select: "zone == 'mars'" });
    await eventually(async () => {
      const jobs = await client.jobs();
      return jobs.find((j) => j.id === 'quick')?.status === 'succeeded' && jobs.find((j) => j.id === 'nowhere')?.reason === 'no-matching-hosts' && jobs.find((j) => j.id === 'gpu-gang')?.status === 'running';
    }, 30_000, 'the jobs to settle');
  }, 180_000);

  afterAll(async () => {
    await client?.disconnect().catch(() => undefined);
    await stack?.stop();
  }, 60_000);

  it('serves every name of DESIGN.md §14, with values that match the API', async () => {
    const samples = await scrape('m1');
    for (const name of NAMES) expect(samples.some((s) => s.name === name || s.name.startsWith(`${name}_`)), name).toBe(true);
    const [jobs, nodes] = await Promise.all([client.jobs(), client.nodes()]);
    for (const state of ['pending', 'running', 'succeeded']) expect([state, value(samples, 'muster_jobs', { state })]).toEqual([state, jobs.filter((j) => j.status === state).length]);
    expect(value(samples, 'muster_pending_jobs', { reason: 'no-matching-hosts' })).toBe(1);
    expect(value(samples, 'muster_nodes', { state: 'up' })).toBe(3);
    expect(value(samples, 'muster_allocated', { resource: 'cpu' })).toBe(nodes.reduce((s, n) => s + n.cpu.used, 0));
    expect(value(samples, 'muster_allocated', { resource: 'gpus' })).toBe(nodes.reduce((s, n) => s + n.gpus.used, 0));
    expect(value(samples, 'muster_allocated', { resource: 'gpus' })).toBe(4);
    expect(value(samples, 'muster_capacity', { resource: 'cpu' })).toBe(nodes.reduce((s, n) => s + n.cpu.total, 0));
    expect(value(samples, 'muster_capacity', { resource: 'gpus' })).toBe(nodes.reduce((s, n) => s + n.gpus.total, 0));
    expect(value(samples, 'muster_queue_used', { queue: 'default', resource: 'gpus' })).toBe(4);
    expect(value(samples, 'muster_queue_guaranteed', { queue: 'default', resource: 'gpus' })).toBe(0);
    expect(value(samples, 'muster_decisions_total', { type: 'GangCommitted', category: '' })).toBe(2);
    expect(value(samples, 'muster_decisions_total', { type: 'GangAborted', category: 'no-matching-hosts' })).toBeGreaterThanOrEqual(1);
    expect(value(samples, 'muster_submit_to_decision_seconds_count')).toBe(2);
    expect(value(samples, 'muster_session_seconds_count')).toBeGreaterThan(0);
    expect(value(samples, 'muster_term')).toBe(1);
    expect(value(samples, 'muster_reservations')).toBe(0);
  });

  it('labels carry no job or node id', async () => {
    for (const id of ['m1', 'm2']) {
      for (const s of await scrape(id)) {
        for (const v of Object.values(s.labels)) expect(['gpu-gang', 'quick', 'nowhere', 'sim-1', 'sim-2', 'sim-3']).not.toContain(v);
      }
    }
  });

  it('a standby exports its role and its lag, and has folded what the leader decided', async () => {
    const standby = await eventually(async () => {
      const [leader, other] = await Promise.all([scrape('m1'), scrape('m2')]);
      const same = value(other, 'muster_log_sequence') === value(leader, 'muster_log_sequence');
      return same && value(other, 'muster_log_lag_transactions') === 0 ? other : null;
    }, 20_000, 'm2 to catch up');
    expect(value(standby, 'muster_replica_leader', { replica: 'm2' })).toBe(0);
    expect(value(standby, 'muster_jobs', { state: 'running' })).toBe(1);
    expect(value(standby, 'muster_decisions_total', { type: 'GangCommitted', category: '' })).toBe(2);
  });

  it('answers anything but GET /metrics with a 404 or 405', async () => {
    expect((await fetch(`http://127.0.0.1:${ports.m1}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${ports.m1}/metrics`, { method: 'POST' })).status).toBe(405);
  });
  it('exports each defined queue\'s use and guarantee from the queue tree (DESIGN.md §12)', async () => {
    await client.setQueue({ name: 'research', guaranteed: { gpus: 4, cpu: 2000 } });
    await client.setQueue({ name: 'vision', parent: 'research', guaranteed: { gpus: 2 } });
    const samples = await eventually(async () => {
      const s = await scrape('m1');
      return value(s, 'muster_queue_guaranteed', { queue: 'vision', resource: 'gpus' }) === 2 ? s : null;
    }, 20_000, 'the queues in the metrics');
    expect(value(samples, 'muster_queue_guaranteed', { queue: 'research', resource: 'gpus' })).toBe(4);
    expect(value(samples, 'muster_queue_guaranteed', { queue: 'research', resource: 'cpu' })).toBe(2000);
    // a resource the guarantee does not name is guaranteed nothing
    expect(value(samples, 'muster_queue_guaranteed', { queue: 'research', resource: 'memoryMb' })).toBe(0);
    expect(value(samples, 'muster_queue_used', { queue: 'research', resource: 'gpus' })).toBe(0);
    // the gang accepted before any queue existed stays in the implicit default queue, which is still shown while it holds jobs
    expect(value(samples, 'muster_queue_used', { queue: 'default', resource: 'gpus' })).toBe(4);
    const rows = await client.queues();
    expect(rows.map((q) => [q.name, q.parent, q.implicit])).toEqual([['default', null, true], ['research', null, false], ['vision', 'research', false]]);
  });

  // last: it restarts the NATS server under the replicas
  it('counts the moves of a replica\'s NATS connections: a server restart is a disconnect and a reconnect', async () => {
    const before = await scrape('m1');
    expect(value(before, 'muster_nats_connection_changes_total', { connection: 'main', kind: 'disconnect' })).toBeUndefined();
    await nats.restart();
    const after = await eventually(async () => {
      const s = await scrape('m1');
      return (value(s, 'muster_nats_connection_changes_total', { connection: 'main', kind: 'reconnect' }) ?? 0) >= 1 ? s : null;
    }, 30_000, 'm1 to count its reconnect');
    expect(value(after, 'muster_nats_connection_changes_total', { connection: 'main', kind: 'disconnect' })).toBeGreaterThanOrEqual(1);
    expect(value(after, 'muster_nats_connection_changes_total', { connection: 'snapshots', kind: 'disconnect' })).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
