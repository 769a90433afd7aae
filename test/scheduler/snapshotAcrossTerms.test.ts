// Snapshots under frequent failover: a leader counts `snapshotEvery` from the newest snapshot, not
// from the start of its own term, so leaders whose terms are each shorter than that still save
// them, and a replica started later replays only the tail (it replayed the whole log before).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connect, listSnapshots, openLeaderLease, publishInput } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { HeartbeatMonitor, Replica, resolveOptions, startScheduler } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { readWholeLog } from '../support/musterLog.ts';
import { eventually } from '../support/schedulerProcess.ts';

const silent = pino({ level: 'silent' });
const EVERY = 25;

describe('snapshots when every leader term is short', () => {
  let server: NatsServerHandle;
  let bus: Bus;

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
  });

  it('terms shorter than snapshotEvery still save snapshots, and a later start replays only the tail', async () => {
    const termLengths: number[] = [];
    let job = 0;
    for (let term = 0; term < 6; term++) {
      const scheduler = await startScheduler({ natsUrl: server.url, id: `s${term % 2}`, logger: silent, leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: EVERY });
      await eventually(() => scheduler.role() === 'leader', 10_000, 'leadership');
      // the streams exist once the first replica has started
      if (term === 0) await publishInput(bus, 'muster.in.node.n1.register', { id: 'n1', labels: {}, capacity: { cpu: 100_000, memoryMb: 100_000, slots: 1000 }, gpus: [] });
      const from = scheduler.state().seq;
      const target = job + 6;
      for (; job < target; job++) await publishInput(bus, 'muster.in.submit', { id: `j${job}`, identity: { user: 'u' }, tasks: 1, resources: { cpu: 1, memoryMb: 1 } });
      await eventually(() => scheduler.state().lastInputSeq >= job + 1 || null, 10_000, 'the term folded its inputs');
      // a snapshot saved by this term is written before it stops
      await scheduler.stop();
      termLengths.push(scheduler.state().seq - from);
    }
    expect(Math.max(...termLengths)).toBeLessThan(EVERY);
    const logLength = (await readWholeLog(bus)).length;
    expect(logLength).toBeGreaterThan(2 * EVERY);
    const saved = (await listSnapshots(bus)).map((s) => s.seq);
    expect(saved.length).toBeGreaterThan(0);
    // no two snapshots closer than snapshotEvery: each term knew of the ones before it
    const sorted = [...saved].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect((sorted[i] as number) - (sorted[i - 1] as number)).toBeGreaterThanOrEqual(EVERY);

    const later = new Replica({ bus, lease: await openLeaderLease(bus), heartbeats: new HeartbeatMonitor(0), opts: resolveOptions({ natsUrl: server.url, id: 'late', logger: silent }), log: silent });
    const report = await later.rebuild();
    expect(report.snapshotSeq).toBe(Math.max(...saved));
    expect(report.replayed).toBeLessThan(logLength - EVERY);
  }, 120_000);
});
