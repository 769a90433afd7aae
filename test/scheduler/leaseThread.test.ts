// The lease thread refreshes a leader's lease on its own connection while the main loop shows
// progress, and stops once it shows none for `wedgedMs` (four leases, at least 2 s): load cannot
// starve the lease, a wedged leader still loses it. Real nats-server.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, ensureStreams, openLeaderLease } from '@muster/bus';
import { resolveOptions } from '@muster/scheduler';
import { LeaseThread } from '@muster/scheduler/testing';
import { startNatsServer } from '../support/natsServer.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the lease thread', () => {
  it('refreshes while the main loop ticks, stops once it has not for the wedge time, and says the lease lost to another', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const bus = await connect({ servers: server.url, name: 'test' });
    cleanups.push(() => bus.close());
    await ensureStreams(bus, { replicas: 1 });
    const lease = await openLeaderLease(bus);
    const created = await lease.createLease('s1', 1);
    if (!created.ok) throw new Error('lease not created');
    const thread = new LeaseThread(resolveOptions({ natsUrl: server.url, id: 's1', logger: pino({ level: 'silent' }), leaseMs: 300 }), pino({ level: 'silent' }));
    cleanups.push(() => thread.close());
    expect(await thread.ready).toBe(true);
    let lost = 0;
    const won = { term: 1, revision: created.revision };
    thread.hold(won, () => lost++);
    const revision = async (): Promise<number> => (await lease.readLease())?.revision ?? -1;

    // ticking (a loop that moves on): refreshed every 100 ms
    const ticking = setInterval(() => thread.tick(), 50);
    await new Promise((r) => setTimeout(r, 1_000));
    clearInterval(ticking);
    const whileTicking = await revision();
    expect(whileTicking).toBeGreaterThan(created.revision + 5);

    // no tick: refreshed on for the wedge time (2 s), then not at all
    await new Promise((r) => setTimeout(r, 3_000));
    const wedged = await revision();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await revision()).toBe(wedged);

    // ticking again, then another replica takes the lease: said lost, and nothing more written
    const ticks = setInterval(() => thread.tick(), 50);
    await expect.poll(revision, { timeout: 5_000 }).toBeGreaterThan(wedged);
    // another replica's write lands between two refreshes (or a refresh lands first: take it again)
    await expect.poll(async () => (await lease.updateLease(await revision(), { id: 's2', term: 2 })).ok, { timeout: 5_000 }).toBe(true);
    await expect.poll(() => lost, { timeout: 5_000 }).toBe(1);
    clearInterval(ticks);
    expect(await lease.readLease()).toMatchObject({ id: 's2', term: 2 });
    await thread.drop(won);
  }, 30_000);
});
