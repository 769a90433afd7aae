import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '@muster/bus';
import { watchReplicas } from '@muster/drill';
import type { ReplicaStatus } from '@muster/drill';
import { startNatsServer } from '../support/natsServer.ts';
import { eventually, replicaStatus, spawnScheduler } from '../support/schedulerProcess.ts';
import type { SchedulerProcess } from '../support/schedulerProcess.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

// The soak's watch over the replicas: one that stops answering (here SIGSTOP'd, as the soak's
// standby that never answered again after its restart) is named while the drill runs, with its pid,
// and a replica that answers again is said to.
describe('the drill names a replica that stops answering', () => {
  it('names the silent replica (id and pid) within the bound and not the one that answers', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.stop());
    const bus = await connect({ servers: nats.url, name: 'replica-watch-test' });
    cleanups.push(() => bus.close());
    const procs = new Map<string, SchedulerProcess>(['a', 'b'].map((id) => [id, spawnScheduler({ id, urls: [nats.url], leaseMs: 600, replicas: 1 })]));
    for (const p of procs.values()) cleanups.push(() => p.kill());
    await eventually(async () => (await replicaStatus(bus, 'a')) !== null && (await replicaStatus(bus, 'b')) !== null, 30_000, 'both replicas answering');

    const said: string[] = [];
    const origin = Date.now();
    const watch = watchReplicas(
      {
        replicaIds: ['a', 'b'],
        statuses: async (timeoutMs) => new Map<string, ReplicaStatus | null>(await Promise.all(['a', 'b'].map(async (id) => [id, await replicaStatus(bus, id, timeoutMs)] as const))),
        replica: (id) => procs.get(id) as SchedulerProcess,
      },
      { boundMs: 2_000, origin, intervalMs: 250, timeoutMs: 300, say: (line) => said.push(line) },
    );
    const b = procs.get('b') as SchedulerProcess;
    b.signal('SIGSTOP');
    await eventually(() => said.some((l) => l.includes('replica b')), 10_000, 'the watch naming b');
    expect(said[0]).toContain(`replica b (pid ${b.pid}) has not answered its status for`);
    b.signal('SIGCONT');
    await eventually(() => said.some((l) => l.includes('answers again')), 10_000, 'b answering again');
    const silent = await watch.stop();
    expect(silent).toHaveLength(1);
    expect(silent[0]).toMatchObject({ id: 'b', pid: b.pid, answeredAgain: true });
    expect(silent[0]?.ms).toBeGreaterThan(2_000);
    expect(said.filter((l) => l.includes('replica a'))).toEqual([]);
  }, 60_000);

  it('does not name a replica while no replica answers (the connection or NATS is down, not the replica)', async () => {
    const said: string[] = [];
    const watch = watchReplicas(
      { replicaIds: ['a', 'b'], statuses: async () => new Map([['a', null], ['b', null]]), replica: () => ({ pid: 1, running: true }) },
      { boundMs: 100, origin: Date.now(), intervalMs: 50, say: (line) => said.push(line) },
    );
    await new Promise((r) => setTimeout(r, 600));
    expect(await watch.stop()).toEqual([]);
    expect(said).toEqual([]);
  });
});
