import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '@muster/bus';
import { spawnScheduler, startNatsServer } from '@muster/stack';
import type { NatsServerHandle, SchedulerProcess } from '@muster/stack';
import { startLinkProxy } from './drillLinkProxy.ts';
import { roleOf, until } from './testing/replicaRole.ts';
import type { LinkProxy } from './drillLinkProxy.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

// A network slower than half the default lease (400 ms): every chunk a replica sends waits 300 ms.
// A standby's requests were bounded by half a lease (200 ms), so every look at the lease timed out
// and no standby took over a leader that was gone (in an all-kinds drill, seed 14, the drill's
// slow-network of 200 ms and 5 % loss did that for 10 s: a 12.6 s wait with work that fit).
describe('a takeover through a network that delays every request 300 ms', () => {
  it('a standby takes over a killed leader at the default lease', async () => {
    const nats: NatsServerHandle = await startNatsServer();
    cleanups.push(() => nats.stop());
    const link: LinkProxy = await startLinkProxy([{ host: '127.0.0.1', port: nats.port }]);
    cleanups.push(() => link.close());
    const bus = await connect({ servers: nats.url, name: 'slow-link-test' });
    cleanups.push(() => bus.close());
    const procs: SchedulerProcess[] = ['a', 'b'].map((id) => spawnScheduler({ id, urls: link.urls, replicas: 1, logLevel: 'info' }));
    for (const p of procs) cleanups.push(() => p.kill());
    const leaderOf = async (): Promise<SchedulerProcess | null> => {
      for (const p of procs) if ((await roleOf(bus, p.id)) === 'leader') return p;
      return null;
    };
    expect(await until(async () => (await leaderOf()) !== null && (await roleOf(bus, 'a')) !== null && (await roleOf(bus, 'b')) !== null, 30_000)).toBe(true);
    const leader = (await leaderOf()) as SchedulerProcess;
    const standby = procs.find((p) => p !== leader) as SchedulerProcess;
    await link.delay(300);
    await leader.kill();
    const killed = Date.now();
    const tookOver = await until(async () => (await roleOf(bus, standby.id)) === 'leader', 15_000);
    expect(tookOver, `${standby.id} did not lead within 15 s of the kill through a 300 ms link:\n${standby.log().slice(-3_000)}`).toBe(true);
    expect(Date.now() - killed).toBeLessThan(10_000);
  }, 90_000);
});
