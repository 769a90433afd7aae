import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connect, listSnapshots, openLeaderLease, publishInput, saveSnapshot } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { shardSize, stateHash } from '@muster/core';
import { HeartbeatMonitor, Replica, resolveOptions, startScheduler } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { readWholeLog, replay } from '../support/musterLog.ts';
import { eventually } from '../support/schedulerProcess.ts';

const silent = pino({ level: 'silent' });

describe('rebuild from snapshot plus tail', () => {
  let server: NatsServerHandle;
  let bus: Bus;

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
    const scheduler = await startScheduler({ natsUrl: server.url, id: 's1', logger: silent, leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: 10, checkpointEvery: 7 });
    await eventually(() => scheduler.role() === 'leader', 10_000, 'leadership');
    await publishInput(bus, 'muster.in.node.n1.register', { id: 'n1', labels: {}, capacity: { cpu: 100_000, memoryMb: 100_000, slots: 1000 }, gpus: [] });
    for (let i = 0; i < 40; i++) {
      await publishInput(bus, 'muster.in.submit', { id: `j${i}`, identity: { user: 'u' }, tasks: 1, resources: { cpu: 1, memoryMb: 1 } });
      await new Promise((r) => setTimeout(r, 15));
    }
    await eventually(async () => (await listSnapshots(bus)).length > 0 || null, 30_000, 'a snapshot');
    await eventually(() => (shardSize(scheduler.state().pending) === 0 && shardSize(scheduler.state().jobs) === 40 ? true : null), 30_000, 'all placed');
    await scheduler.stop();
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
  });

  async function freshReplica(): Promise<Replica> {
    return new Replica({ bus, lease: await openLeaderLease(bus), heartbeats: new HeartbeatMonitor(0), opts: resolveOptions({ natsUrl: server.url, id: 'r', logger: silent }), log: silent });
  }

  it('gives the same state hash as replay from sequence 1, and checkpoints agree', async () => {
    const replica = await freshReplica();
    const report = await replica.rebuild();
    expect(report.snapshotSeq).not.toBeNull();
    const log = await readWholeLog(bus);
    expect(report.snapshotSeq! + report.replayed).toBe(log.length);
    expect(stateHash(replica.state)).toBe(stateHash(replay(log)));
    expect(log.some((l) => l.tx.kind === 'checkpoint')).toBe(true);
    expect(replica.refusedBecause()).toBeNull();
  });

  it('ignores a snapshot of an older state schema and replays from the start', async () => {
    const log = await readWholeLog(bus);
    const state = replay(log);
    // an old-schema snapshot at the very end whose content differs: using it would change the hash
    const old = { ...state, schema: 0, lastInputSeq: 999_999 };
    await saveSnapshot(bus, { schema: 0, seq: log.length, hash: stateHash(old), state: old }, { keep: 10 });
    const replica = await freshReplica();
    await replica.rebuild();
    expect(replica.state.lastInputSeq).not.toBe(999_999);
    expect(stateHash(replica.state)).toBe(stateHash(state));
  });

  it('ignores a snapshot past the log\'s end (a log that lost writes) and replays the log', async () => {
    const log = await readWholeLog(bus);
    const state = replay(log);
    // still past the end when the end is read again after the load (which a snapshot saved during a slow load is not)
    const future = { ...state, seq: log.length + 50, lastInputSeq: 999_999 };
    await saveSnapshot(bus, { schema: state.schema, seq: log.length + 50, hash: stateHash(future), state: future }, { keep: 10 });
    const replica = await freshReplica();
    const report = await replica.rebuild();
    expect(report.snapshotSeq === null || report.snapshotSeq <= log.length).toBe(true);
    expect(replica.state.lastInputSeq).not.toBe(999_999);
    expect(stateHash(replica.state)).toBe(stateHash(state));
  });
});
