// Contract v1.2 (DESIGN.md §3): appends are fenced by sequence alone, so before LeaderElected a new
// leader reads the log's transaction at its folded end from the stream's leader and compares its
// hash with its own chain head. A replica that folded a history the log no longer holds (written
// again, as long, by someone else) must not chain its election onto it. Real nats-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { LOG_STREAM, appendTransactions, connect, ensureStreams, lastLogSequence, openLeaderLease, readLogMessage } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { HeartbeatMonitor, Replica, resolveOptions } from '@muster/scheduler';
import { chain } from '../bus/transactions.ts';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { eventually } from '../support/schedulerProcess.ts';

const silent = pino({ level: 'silent' });

describe('a new leader looks at the log where its fold ends', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let admin: NatsAdmin;

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
    admin = await NatsAdmin.connect(server.url);
    await ensureStreams(bus, { replicas: 1 });
  });

  afterAll(async () => {
    await admin?.close();
    await bus?.close();
    await server?.stop();
  });

  it('refuses to lead, writing nothing, when the log holds another transaction there', async () => {
    expect((await appendTransactions(bus, chain(3, null, 'old'), 0)).ok).toBe(true);
    const opts = resolveOptions({ natsUrl: server.url, id: 's1', logger: silent, leaseMs: 300, snapshotEvery: 0, heartbeatTimeoutMs: 0 });
    const replica = new Replica({ bus, lease: await openLeaderLease(bus), heartbeats: new HeartbeatMonitor(0), opts, log: silent });
    await replica.rebuild();
    expect(replica.state.seq).toBe(3);
    // the log lost its writes and was written again, as long, by another history
    await admin.deleteStream(LOG_STREAM);
    await ensureStreams(bus, { replicas: 1 });
    expect((await appendTransactions(bus, chain(3, null, 'other'), 0)).ok).toBe(true);
    await replica.start();
    try {
      // LeaderElected expecting sequence 3 would land: only the look at the hash keeps it out
      const why = await eventually(() => replica.refusedBecause(), 10_000, 's1 refusing');
      expect(why).toMatch(/at 3 is not the one folded/);
      await new Promise((r) => setTimeout(r, 1000));
      expect(replica.role()).not.toBe('leader');
      expect(await lastLogSequence(bus)).toBe(3);
      expect((await readLogMessage(bus, 3))?.tx.leader).toBe('other');
    } finally {
      await replica.stop();
    }
  }, 30_000);
});
