import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { sleep } from '@muster/bus';
import type { LeaderLease } from '@muster/bus';
import { LeaseKeeper } from './leaseKeeper.ts';
import type { WonLease } from './leaseKeeper.ts';

// a lease held by s1 at revision 7 that is never refreshed (its KV write is slow, or it is dead)
function staleLease(): LeaderLease & { updates: number } {
  const lease = {
    updates: 0,
    readLease: async () => ({ id: 's1', term: 3, revision: 7 }),
    createLease: async () => ({ ok: false as const, code: 'conflict' as const }),
    updateLease: async () => {
      lease.updates++;
      return { ok: true as const, revision: 8 };
    },
    releaseLease: async () => ({ ok: true as const }),
  };
  return lease as unknown as LeaderLease & { updates: number };
}


/** Looks at the lease as a standby does, every `everyMs`, until it is won (at most ten looks); the won lease or null. */
async function looksUntilWon(keeper: LeaseKeeper, everyMs: number): Promise<WonLease | null> {
  for (let i = 0; i < 10; i++) {
    await sleep(everyMs);
    const won = await keeper.tryAcquire(3);
    if (won !== null) return won;
  }
  return null;
}

describe('LeaseKeeper', () => {
  it('takes over a lease nobody refreshed for the lease time', async () => {
    const lease = staleLease();
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'silent' }));
    expect(await keeper.tryAcquire(3)).toBeNull();
    // a standby looks every fifth of a lease
    expect(await looksUntilWon(keeper, 20)).toEqual({ term: 4, revision: 8 });
  });

  it('does not count its own stall as the leader\'s silence: after a look three leases late it looks on for a lease', async () => {
    const lease = staleLease();
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'silent' }));
    expect(await keeper.tryAcquire(3)).toBeNull();
    // the standby's event loop was busy: its next look comes 300 ms later
    await sleep(300);
    expect(await keeper.tryAcquire(3)).toBeNull();
    // half a lease of that counted; the other half must be seen looking
    await sleep(20);
    expect(await keeper.tryAcquire(3)).toBeNull();
    expect(await looksUntilWon(keeper, 20)).toEqual({ term: 4, revision: 8 });
  });

  it('does not take over while the log grows, though the lease is not refreshed (a loaded leader whose KV write is slow)', async () => {
    const lease = staleLease();
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'silent' }));
    expect(await keeper.tryAcquire(3)).toBeNull();
    for (let i = 0; i < 6; i++) {
      await sleep(50);
      keeper.sawActivity();
      expect(await keeper.tryAcquire(3)).toBeNull();
    }
    expect(lease.updates).toBe(0);
    // the log stops: the lease time after the last growth, the standby takes over
    await sleep(30);
    expect(await keeper.tryAcquire(3)).toBeNull();
    expect(await looksUntilWon(keeper, 30)).toEqual({ term: 4, revision: 8 });
  });

  it('a takeover write that timed out but landed is won at the next look, not waited out for another lease', async () => {
    let current = { id: 's1', term: 3, revision: 7 };
    const lease = {
      ...staleLease(),
      readLease: async () => current,
      // the short-bounded write gives up, but the server applied it
      updateLease: async (_revision: number, value: { id: string; term: number }) => {
        current = { ...value, revision: 8 };
        return { ok: false as const, code: 'timeout' as const, cause: new Error('timeout') };
      },
    } as unknown as LeaderLease;
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'silent' }));
    expect(await keeper.tryAcquire(3)).toBeNull();
    // looks until the takeover write is sent (it times out)
    for (let i = 0; i < 10 && current.id === 's1'; i++) {
      await sleep(30);
      expect(await keeper.tryAcquire(3)).toBeNull();
    }
    expect(await keeper.tryAcquire(3)).toEqual({ term: 4, revision: 8 });
  });

  it('waits out an earlier life\'s lease under its own id like any silent holder\'s', async () => {
    const lease = { ...staleLease(), readLease: async () => ({ id: 's2', term: 3, revision: 7 }) } as unknown as LeaderLease;
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'silent' }));
    expect(await keeper.tryAcquire(3)).toBeNull();
    await sleep(20);
    expect(await keeper.tryAcquire(3)).toBeNull();
    expect(await looksUntilWon(keeper, 20)).toEqual({ term: 4, revision: 8 });
  });

  it('leaves a lease under its own id that another process refreshes to that process, and says so once', async () => {
    // a second process started as s2 leads: the lease is s2's, refreshed between every two looks
    let revision = 7;
    let refreshing = true;
    const lease = {
      ...staleLease(),
      readLease: async () => ({ id: 's2', term: 3, revision: refreshing ? ++revision : revision }),
      updateLease: async () => ({ ok: true as const, revision: revision + 1 }),
    } as unknown as LeaderLease;
    const said: string[] = [];
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'error' }, { write: (line: string) => void said.push(line) }));
    for (let i = 0; i < 10; i++) {
      expect(await keeper.tryAcquire(3)).toBeNull();
      await sleep(30);
    }
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('two processes run with one --id');
    // that process stops: its lease is waited out, then taken over
    refreshing = false;
    expect(await looksUntilWon(keeper, 30)).toEqual({ term: 4, revision: revision + 1 });
  });

  it('takes back at once the lease of a term it won, found after it stepped down', async () => {
    let current: { id: string; term: number; revision: number } | null = null;
    const lease = {
      ...staleLease(),
      readLease: async () => current,
      createLease: async () => ({ ok: true as const, revision: 1 }),
      updateLease: async () => ({ ok: true as const, revision: 6 }),
    } as unknown as LeaderLease;
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'silent' }));
    expect(await keeper.tryAcquire(3)).toEqual({ term: 4, revision: 1 });
    // it led and refreshed to revision 5, then stepped down on a refresh whose outcome was unknown
    current = { id: 's2', term: 4, revision: 5 };
    expect(await keeper.tryAcquire(4)).toEqual({ term: 5, revision: 6 });
  });
});
