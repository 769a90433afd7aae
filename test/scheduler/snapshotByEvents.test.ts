import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connect, listSnapshots, openLeaderLease, publishInput } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { stateHash } from '@muster/core';
import { HeartbeatMonitor, Replica, resolveOptions, startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { readWholeLog, replay } from '../support/musterLog.ts';
import { eventually } from '../support/schedulerProcess.ts';

// A rebuild replays events, not transactions: a leader behind on a backlog writes few large
// transactions, so a snapshot falls due by events folded too (snapshotEveryEvents). And a rebuild
// that failed part way goes on from what it folded instead of replaying the log again.

const silent = pino({ level: 'silent' });

async function submitJobs(bus: Bus, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) {
    await publishInput(bus, 'muster.in.submit', { id: `j${i}`, identity: { user: 'u' }, tasks: 1, resources: { cpu: 1, memoryMb: 1 } });
  }
}

describe('snapshots by events, and a rebuild that goes on', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let scheduler: SchedulerHandle;

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
  }, 30_000);

  afterAll(async () => {
    await scheduler?.stop();
    await bus?.close();
    await server?.stop();
  });

  it('saves a snapshot once enough events were folded, however few the transactions', async () => {
    // a transaction count that is never reached; the events of 30 submissions and their sessions are
    scheduler = await startScheduler({ natsUrl: server.url, id: 's1', logger: silent, leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: 1_000_000, snapshotEveryEvents: 40 });
    await eventually(() => scheduler.role() === 'leader', 10_000, 'leadership');
    await publishInput(bus, 'muster.in.node.n1.register', { id: 'n1', labels: {}, capacity: { cpu: 100_000, memoryMb: 100_000, slots: 1000 }, gpus: [] });
    await submitJobs(bus, 0, 30);
    const [snapshot] = await eventually(async () => {
      const stored = await listSnapshots(bus);
      return stored.length > 0 ? stored : null;
    }, 20_000, 'a snapshot');
    expect(snapshot!.seq).toBeLessThan(1_000_000);
    const log = await readWholeLog(bus);
    expect(log.length).toBeLessThan(200);
    expect(log.slice(0, snapshot!.seq).reduce((n, l) => n + l.tx.events.length, 0)).toBeGreaterThanOrEqual(40);
  }, 40_000);

  it('a second rebuild of a replica goes on from what the first folded, to the same state as replay', async () => {
    // from here no more snapshots: the newest stays behind what the replica folds
    await scheduler.stop();
    scheduler = await startScheduler({ natsUrl: server.url, id: 's2', logger: silent, leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: 0 });
    await eventually(() => scheduler.role() === 'leader', 10_000, 'leadership');
    await submitJobs(bus, 100, 5);
    await eventually(async () => ((await readWholeLog(bus)).some((l) => l.tx.events.some((e) => e.type === 'GangCommitted' && e.jobId === 'j104')) ? true : null), 20_000, 'j104 placed');
    const [newest] = await listSnapshots(bus);
    const replica = new Replica({ bus, lease: await openLeaderLease(bus), heartbeats: new HeartbeatMonitor(0), opts: resolveOptions({ natsUrl: server.url, id: 'r', logger: silent }), log: silent });
    const first = await replica.rebuild();
    const folded = replica.state.seq;
    expect(first.snapshotSeq).not.toBeNull();
    await submitJobs(bus, 30, 10);
    const grown = await eventually(async () => {
      const log = await readWholeLog(bus);
      return log.length > folded + 2 && scheduler.state().seq === log.length ? log : null;
    }, 20_000, 'the log to grow');
    expect(newest!.seq).toBeLessThan(folded);
    const second = await replica.rebuild();
    expect(second.replayed).toBe(grown.length - folded);
    expect(stateHash(replica.state)).toBe(stateHash(replay(grown)));
  }, 40_000);
});

describe('a replica that takes over, and the snapshots saved while it stood by', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  const handles: SchedulerHandle[] = [];

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
  }, 30_000);

  afterAll(async () => {
    for (const h of handles) await h.stop();
    await bus?.close();
    await server?.stop();
  });

  it('counts events from the newest stored snapshot, rather than saving another at once', async () => {
    const opts = { natsUrl: server.url, logger: silent, leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: 1_000_000, snapshotEveryEvents: 30 };
    const a = await startScheduler({ ...opts, id: 'a' });
    handles.push(a);
    await eventually(() => a.role() === 'leader', 10_000, 'a leading');
    await publishInput(bus, 'muster.in.node.n1.register', { id: 'n1', labels: {}, capacity: { cpu: 100_000, memoryMb: 100_000, slots: 1000 }, gpus: [] });
    // b's own word on the snapshots it saves
    const said: string[] = [];
    const b = await startScheduler({ ...opts, id: 'b', logger: pino({ level: 'info' }, { write: (line: string) => void said.push(line) }) });
    handles.push(b);
    await eventually(() => b.role() === 'standby', 10_000, 'b standing by');
    await submitJobs(bus, 0, 20);
    // b has folded far more than 30 events while a saved the snapshots
    await eventually(() => (a.state().jobs !== undefined && b.state().seq === a.state().seq && a.state().lastInputSeq >= 21 ? true : null), 20_000, 'b caught up with a');
    await eventually(async () => ((await listSnapshots(bus)).length > 0 ? true : null), 20_000, 'a snapshot of a');
    await a.stop();
    await eventually(() => b.role() === 'leader', 10_000, 'b leading');
    // its election and a few turns: a handful of events, no snapshot due
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(said.some((line) => line.includes('elected: leading'))).toBe(true);
    expect(said.filter((line) => line.includes('snapshot saved'))).toEqual([]);
  }, 60_000);
});

