import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connect } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { eventually, replicaStatus } from '../support/schedulerProcess.ts';

const LEASE_MS = 600;
const HUNG_MS = 2500;

// After a NATS node restart both standbys' ticks sat in one request for 2.3 s (the bus's timeout),
// so a leader paused then was taken over only 3.0 s later (docs/drills.md). A standby's tick must
// give up on a request soon (half a lease, at least 500 ms: a shorter bound failed every look on a
// network that delays each request 200 ms), and look again.
describe("a standby's tick on a NATS server that stops answering", () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let leader: SchedulerHandle;
  let standby: SchedulerHandle;
  const failures: number[] = [];

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
    const opts = { natsUrl: server.url, leaseMs: LEASE_MS, heartbeatTimeoutMs: 0, snapshotEvery: 0 };
    leader = await startScheduler({ ...opts, id: 's1', logger: pino({ level: 'silent' }) });
    await eventually(() => leader.role() === 'leader', 10_000, 's1 leading');
    const logger = pino({ level: 'warn' }, {
      write(line: string) {
        if ((JSON.parse(line) as { msg?: string }).msg === 'standby tick failed') failures.push(performance.now());
      },
    });
    standby = await startScheduler({ ...opts, id: 's2', logger });
    await eventually(async () => (await replicaStatus(bus, 's2'))?.role === 'standby', 10_000, 's2 standing by');
  }, 60_000);

  afterAll(async () => {
    if (server !== undefined && server.running) process.kill(server.pid, 'SIGCONT');
    await bus?.close();
    await standby?.stop();
    await leader?.stop();
    await server?.stop();
  });

  it('gives up each request within half a lease (at least 500 ms) and looks again', async () => {
    const before = failures.length;
    process.kill(server.pid, 'SIGSTOP');
    const stopped = performance.now();
    try {
      await new Promise((r) => setTimeout(r, HUNG_MS));
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
    const during = failures.slice(before).filter((t) => t <= stopped + HUNG_MS);
    // a tick every lease/5, each request bounded by max(lease/2, 500 ms): a failed tick at least every ~620 ms
    expect(during.length).toBeGreaterThanOrEqual(3);
    expect(during[0]! - stopped).toBeLessThan(LEASE_MS + 200);
  }, 30_000);
});
