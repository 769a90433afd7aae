import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '@muster/bus';
import { spawnScheduler, startNatsServer } from '@muster/stack';
import type { SchedulerProcess } from '@muster/stack';
import { startLinkProxy } from './drillLinkProxy.ts';
import { roleOf, until } from './testing/replicaRole.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const tookOver = (p: SchedulerProcess): number => p.log().split('\n').filter((l) => l.includes('"msg":"took over the lease"')).length;

// At the default lease (400 ms) a standby's check after winning the lease (the catch-up, the tail
// of MUSTER_DECISIONS, the look at the log's end: five or six round trips) can outlast the lease on
// a loaded machine; the lease was not refreshed meanwhile, another standby took it over mid-check,
// and the two replicas' elections raced (docs/drills.md, seed 25). Here the winner's every request
// waits 150 ms (the drill's link proxy), so its check takes about a second.
describe('a standby that won the lease keeps it while it checks the log before leading', () => {
  it('is not taken over by another standby during a check longer than the lease', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.stop());
    const link = await startLinkProxy([{ host: '127.0.0.1', port: nats.port }]);
    cleanups.push(() => link.close());
    const bus = await connect({ servers: nats.url, name: 'takeover-check-test' });
    cleanups.push(() => bus.close());
    const leader = spawnScheduler({ id: 'a', urls: [nats.url], replicas: 1, logLevel: 'info' });
    cleanups.push(() => leader.kill());
    expect(await until(async () => (await roleOf(bus, 'a')) === 'leader', 30_000)).toBe(true);
    const slow = spawnScheduler({ id: 'b', urls: link.urls, replicas: 1, logLevel: 'info' });
    const other = spawnScheduler({ id: 'c', urls: [nats.url], replicas: 1, logLevel: 'info' });
    for (const p of [slow, other]) cleanups.push(() => p.kill());
    expect(await until(async () => (await roleOf(bus, 'b')) === 'standby' && (await roleOf(bus, 'c')) === 'standby', 30_000)).toBe(true);
    // c stands aside while b wins the lease; it looks again once b is checking
    other.signal('SIGSTOP');
    await link.delay(150);
    await leader.kill();
    expect(await until(() => tookOver(slow) > 0, 15_000, 20), `b did not win the lease:\n${slow.log().slice(-2_000)}`).toBe(true);
    other.signal('SIGCONT');
    expect(await until(async () => (await roleOf(bus, 'b')) === 'leader', 15_000), `b did not lead:\n${slow.log().slice(-3_000)}`).toBe(true);
    // a few leases more: c, looking again, sees the lease refreshed and never takes it
    await new Promise((r) => setTimeout(r, 2_000));
    expect(tookOver(other), `c took the lease over:\n${other.log().slice(-2_000)}`).toBe(0);
    expect(slow.log()).not.toContain('append failed: stepping down');
  }, 120_000);
});
