import { describe, expect, it } from 'vitest';
import type { Bus } from '@muster/bus';
import type { NatsServerHandle } from '@muster/stack';
import { awaitNodeCurrent, catchUpOrRestart } from './drillTargets.ts';

// A NATS node whose copies never fill (nats-server 2.9.10 after a restart on an empty store) kept
// a full-disk fault's recovery going past the chaotic schedule's bound, and the drill ended without
// checking anything. Past the bound the waits give up, as an error of their fault.

describe('the waits for a NATS node, cut short', () => {
  const cut = AbortSignal.abort();
  // never asked: a wait cut short reads nothing more
  const bus = {} as Bus;
  const node = { name: 'n3', monitorPort: 1 } as NatsServerHandle;

  it('a catch-up cut short throws, naming the node, without restarting it', async () => {
    let restarts = 0;
    await expect(catchUpOrRestart(bus, node, async () => void restarts++, () => undefined, cut)).rejects.toThrow(/^nats n3's store was still behind when the drill's bound on its faults ran out: MUSTER_IN/);
    expect(restarts).toBe(0);
  });

  it('a wait for its copies to be current, cut short, throws', async () => {
    await expect(awaitNodeCurrent(bus, 'n3', 120_000, 1, cut)).rejects.toThrow(/^nats n3's copies were still behind when the drill's bound on its faults ran out/);
  });
});
