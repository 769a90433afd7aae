import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLeaderLease } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

describe('leader lease', () => {
  it('creates once, updates by compare-and-set, and releases so another can create', async () => {
    const a = await openLeaderLease(bus.bus);
    const b = await openLeaderLease((await bus.client({ name: 'candidate-b' })));
    expect(await a.readLease()).toBeNull();

    const created = await a.createLease('a', 1);
    if (!created.ok) throw new Error('create failed');
    expect(await b.createLease('b', 1)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await b.readLease()).toEqual({ id: 'a', term: 1, revision: created.revision });

    const refreshed = await a.updateLease(created.revision, { id: 'a', term: 1 });
    if (!refreshed.ok) throw new Error('refresh failed');
    expect(refreshed.revision).toBeGreaterThan(created.revision);
    // b saw the old revision: its takeover loses
    expect(await b.updateLease(created.revision, { id: 'b', term: 2 })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await a.releaseLease(created.revision)).toMatchObject({ ok: false, code: 'conflict' });

    expect(await a.releaseLease(refreshed.revision)).toEqual({ ok: true });
    expect(await b.readLease()).toBeNull();
    const taken = await b.createLease('b', 2);
    expect(taken.ok).toBe(true);
    expect(await a.readLease()).toMatchObject({ id: 'b', term: 2 });
  });

  it('fails loudly on a lease value that is not {id, term}, naming its revision', async () => {
    const lease = await openLeaderLease(bus.bus);
    const pa = await bus.admin.publish('$KV.muster_leader.leader', 'garbage');
    await expect(lease.readLease()).rejects.toMatchObject({ code: 'BAD_MESSAGE', seq: pa.seq });
  });
});
