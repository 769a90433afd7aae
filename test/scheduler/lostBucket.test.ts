// A lease bucket deleted under a running cluster: the running replicas create it again (said at
// error), and failover works again; before, it stayed gone until a replica restarted, and a standby
// never took over from a leader that stopped. Two in-process replicas on one real nats-server.
import { afterEach, describe, it } from 'vitest';
import { bucketStream, connect, streamInfo } from '@muster/bus';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { startNatsServer } from '../support/natsServer.ts';
import { eventually } from '../support/schedulerProcess.ts';
import { capturingLogger } from '../support/capturedLog.ts';

const LEASE_STREAM = bucketStream.kv('muster_leader');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the lease bucket deleted under running replicas', () => {
  it('is created again by them, said at error, and a standby takes over from a leader that stops', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const admin = await NatsAdmin.connect(server.url);
    cleanups.push(() => admin.close());
    const bus = await connect({ servers: server.url, name: 'test' });
    cleanups.push(() => bus.close());
    const errors: string[] = [];
    const unchecked: string[] = [];
    // the lines at error and above, and the streams a look could not check (said if the test fails)
    const logger = capturingLogger('debug', (line) => {
      if (line.level >= 50) errors.push(line.msg);
      if (line.msg === 'a stream could not be checked') unchecked.push(`${String(line.stream)}: ${String((line.err as { message?: string } | undefined)?.message)}`);
    });
    const start = (id: string): Promise<SchedulerHandle> => startScheduler({ natsUrl: server.url, id, logger, leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: 0, streamCheckMs: 500 });
    const s1 = await start('s1');
    cleanups.push(() => s1.stop());
    await eventually(() => s1.role() === 'leader', 10_000, 's1 leading');
    const s2 = await start('s2');
    cleanups.push(() => s2.stop());

    await admin.deleteStream(LEASE_STREAM);
    await eventually(async () => (await streamInfo(bus, LEASE_STREAM).catch(() => null)) !== null || null, 15_000, 'the bucket created again').catch((err: Error) => {
      throw new Error(`${err.message}; streams the replicas could not check meanwhile: ${unchecked.slice(-6).join(' | ') || 'none'}`);
    });
    // the replica says so once its create is answered, which can come after this test's look sees the bucket
    await eventually(() => errors.some((m) => m.includes(`${LEASE_STREAM} was missing: created it again`)) || null, 15_000, 'the ALARM that it was created again');

    // failover works again: the leader goes, the standby leads
    await eventually(() => [s1, s2].some((s) => s.role() === 'leader') || null, 10_000, 'a leader');
    const leader = s1.role() === 'leader' ? s1 : s2;
    const standby = leader === s1 ? s2 : s1;
    await leader.stop();
    await eventually(() => standby.role() === 'leader' || null, 10_000, 'the standby taking over');
  }, 60_000);
});
