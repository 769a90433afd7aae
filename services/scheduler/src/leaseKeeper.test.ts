import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { LeaderLease } from '@muster/bus';
import { LeaseKeeper } from './leaseKeeper.ts';

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
    watchLease: async function* () {
      return;
    },
  };
  return lease as unknown as LeaderLease & { updates: number };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('LeaseKeeper', () => {
  it('takes over a lease nobody refreshed for the lease time', async () => {
    const lease = staleLease();
    const keeper = new LeaseKeeper(lease, 's2', 100, pino({ level: 'silent' }));
    expect(await keeper.tryAcquire(3)).toBeNull();
    await sleep(150);
    expect(await keeper.tryAcquire(3)).toEqual({ term: 4, revision: 8 });
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
    await sleep(150);
    expect(await keeper.tryAcquire(3)).toEqual({ term: 4, revision: 8 });
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
    await sleep(150);
    expect(await keeper.tryAcquire(3)).toBeNull();
    expect(await keeper.tryAcquire(3)).toEqual({ term: 4, revision: 8 });
  });
});
