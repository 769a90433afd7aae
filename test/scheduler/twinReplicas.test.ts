import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connect, openLeaderLease } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { eventually } from '../support/schedulerProcess.ts';

// Two processes started with one --id (in an hour soak, the drill's own slip; in production, a
// supervisor that restarts a replica it believes dead) each took "its own" lease at once, and took
// it from each other every few hundred ms for the rest of the hour. Now the one that leads keeps
// leading, and the other says so at error.

describe('two processes with one replica id', () => {
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

  it('keep one leader, and the second says there are two', async () => {
    const opts = { natsUrl: server.url, id: 'twin', leaseMs: 300, heartbeatTimeoutMs: 0 };
    const first = await startScheduler({ ...opts, logger: pino({ level: 'silent' }) });
    handles.push(first);
    await eventually(() => first.role() === 'leader', 10_000, 'the first leading');
    const said: string[] = [];
    const second = await startScheduler({ ...opts, logger: pino({ level: 'error' }, { write: (line: string) => void said.push(line) }) });
    handles.push(second);
    const lease = await openLeaderLease(bus);
    const termAtStart = (await lease.readLease())!.term;
    // ten leases: the old way, the two took the lease from each other several times in this
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(first.role()).toBe('leader');
    expect(second.role()).toBe('standby');
    expect((await lease.readLease())!.term).toBe(termAtStart);
    expect(said.filter((line) => line.includes('two processes run with one --id'))).toHaveLength(1);
    // the leader stops: the second takes over once the lease falls silent
    await first.stop();
    handles.shift();
    await eventually(() => second.role() === 'leader', 10_000, 'the second leading');
  }, 40_000);
});
