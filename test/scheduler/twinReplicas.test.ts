import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { openLeaderLease } from '@muster/bus';
import type { SchedulerHandle } from '@muster/scheduler';
import { startScheduler } from '@muster/scheduler';
import { startSingleLeader } from '../support/singleLeader.ts';
import type { SingleLeader } from '../support/singleLeader.ts';
import { eventually } from '../support/schedulerProcess.ts';

// Two processes started with one --id (in an hour soak, the drill's own slip; in production, a
// supervisor that restarts a replica it believes dead) each took "its own" lease at once, and took
// it from each other every few hundred ms for the rest of the hour. Now the one that leads keeps
// leading, and the other says so at error.

describe('two processes with one replica id', () => {
  let first: SingleLeader;
  let second: SchedulerHandle;

  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('keep one leader, and the second says there are two', async () => {
    first = await startSingleLeader([], { id: 'twin' });
    const said: string[] = [];
    second = await startScheduler({ natsUrl: first.url, id: 'twin', leaseMs: 300, heartbeatTimeoutMs: 0, logger: pino({ level: 'error' }, { write: (line: string) => void said.push(line) }) });
    const lease = await openLeaderLease(first.bus);
    const termAtStart = (await lease.readLease())!.term;
    // ten leases: the old way, the two took the lease from each other several times in this
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(first.scheduler.role()).toBe('leader');
    expect(second.role()).toBe('standby');
    expect((await lease.readLease())!.term).toBe(termAtStart);
    expect(said.filter((line) => line.includes('two processes run with one --id'))).toHaveLength(1);
    // the leader stops: the second takes over once the lease falls silent
    await first.scheduler.stop();
    await eventually(() => second.role() === 'leader', 10_000, 'the second leading');
  }, 40_000);
});
