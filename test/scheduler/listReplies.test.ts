import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MusterClient } from '@muster/client';
import { ApiServer } from '@muster/scheduler/testing';
import { Cluster, register, submit } from '@muster/core/testing';
import { job, node } from '@muster/core/testing';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

// A list reply larger than the server's max payload cannot be sent: at 200 gangs/s the drill's
// `jobs --status pending` made a replica crash (`'payload' max_payload size exceeded`, thrown in
// the reply's promise). A list now carries as many items as fit, with how many there are.

const MAX_PAYLOAD = 16_384;

describe('muster.api.jobs.list and nodes.list on a server with a small max payload', () => {
  let nats: TestBus;
  let client: MusterClient;
  let api: ApiServer;
  const cluster = new Cluster();
  for (let i = 1; i <= 120; i++) cluster.run(register(node(`node-${String(i).padStart(3, '0')}`, { labels: { rack: `r${i % 7}`, zone: 'a-long-zone-name' } })));
  // more cores than any node has: every job stays pending
  for (let i = 1; i <= 300; i++) cluster.run(submit(job(`job-${String(i).padStart(3, '0')}`, { cpu: 1_000_000 })));

  beforeAll(async () => {
    nats = await startTestBus({ extraConfig: `max_payload: ${MAX_PAYLOAD}`, ensure: false });
    api = new ApiServer(nats.bus, () => cluster.state, pino({ level: 'silent' }));
    api.start();
    client = new MusterClient(await nats.client());
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
    await nats?.stop();
  });

  it('answers with the jobs that fit one reply, in order, and says how many there are', async () => {
    const listed = await client.jobList();
    expect(listed.total).toBe(300);
    expect(listed.truncated).toBe(true);
    expect(listed.items.length).toBeGreaterThan(10);
    expect(listed.items.length).toBeLessThan(300);
    expect(listed.items.map((j) => j.id)).toEqual(Array.from({ length: listed.items.length }, (_, i) => `job-${String(i + 1).padStart(3, '0')}`));
    expect(Buffer.byteLength(JSON.stringify({ ok: true, jobs: listed.items, seq: 0, total: 300, truncated: true }))).toBeLessThanOrEqual(MAX_PAYLOAD);
    // the SDK's plain list is the same first page
    expect((await client.jobs()).map((j) => j.id)).toEqual(listed.items.map((j) => j.id));
  });

  it('takes a limit, and a status filter counts only what it matches', async () => {
    const limited = await client.jobList({ status: 'pending', limit: 5 });
    expect(limited).toMatchObject({ total: 300, truncated: true });
    expect(limited.items.map((j) => j.id)).toEqual(['job-001', 'job-002', 'job-003', 'job-004', 'job-005']);
    expect(await client.jobList({ status: 'running' })).toEqual({ items: [], total: 0, truncated: false });
    expect(await client.jobList({ limit: 400 })).toMatchObject({ total: 300, truncated: true });
  });

  it('cuts the node list the same way', async () => {
    const listed = await client.nodeList();
    expect(listed).toMatchObject({ total: 120, truncated: true });
    expect(listed.items.length).toBeGreaterThan(5);
    expect(listed.items.length).toBeLessThan(120);
    expect((await client.nodeList({ limit: 3 })).items.map((n) => n.id)).toEqual(['node-001', 'node-002', 'node-003']);
  });

  it('refuses a limit that is not a positive integer, naming the field', async () => {
    for (const limit of [0, -1, 2.5, '7', null]) {
      for (const subject of ['muster.api.jobs.list', 'muster.api.nodes.list']) {
        const reply = JSON.parse((await nats.bus.request(subject, JSON.stringify({ limit }), { timeoutMs: 5_000 })).text()) as unknown;
        expect(reply).toEqual({ ok: false, error: { code: 'invalid', message: 'limit must be a positive integer', path: 'limit' } });
      }
    }
  });

  it('survives an answer larger than the server takes: it is reported and the requester times out', async () => {
    const errors: unknown[] = [];
    const sub = nats.bus.serve('test.too-large', () => Promise.resolve('x'.repeat(MAX_PAYLOAD + 1)), { onError: (err) => errors.push(err) });
    await expect(nats.bus.request('test.too-large', '', { timeoutMs: 500 })).rejects.toThrow();
    expect(String(errors[0])).toMatch(/max_payload/);
    // and the connection goes on answering
    expect(await client.jobList({ limit: 1 })).toMatchObject({ total: 300 });
    sub.unsubscribe();
  });
});
