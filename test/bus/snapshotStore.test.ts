import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalHash } from '@muster/core';
import { SNAPSHOT_BUCKET, listSnapshots, loadLatestSnapshot, loadSnapshot, saveSnapshot } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

/** A state of roughly `mb` megabytes of JSON, in a few thousand keyed records. */
function bigState(mb: number, salt: string): Record<string, unknown> {
  const nodes: Record<string, unknown> = {};
  const count = Math.ceil((mb * 1024 * 1024) / 600);
  for (let i = 0; i < count; i++) {
    nodes[`n${i}`] = { id: `n${i}`, labels: { zone: salt, rack: `r${i % 97}` }, used: { cpu: i, memoryMb: i * 2 }, pad: 'x'.repeat(480) };
  }
  return { schema: 1, lastInputSeq: 42, nodes };
}

describe('snapshots', () => {
  it('saves and loads a multi-MB state, verifying its hash', async () => {
    const state = bigState(3, 'a');
    const hash = canonicalHash(state);
    const info = await saveSnapshot(bus.bus, { schema: 1, seq: 1234, hash, state });
    expect(info).toMatchObject({ schema: 1, seq: 1234, hash });
    // several 512 KiB chunks
    expect(info.size).toBeGreaterThan(2.5 * 1024 * 1024);
    const loaded = await loadLatestSnapshot(bus.bus, { schema: 1 });
    expect(loaded.skipped).toEqual([]);
    expect(loaded.snapshot?.seq).toBe(1234);
    expect(loaded.snapshot?.hash).toBe(hash);
    expect(loaded.snapshot?.state).toEqual(state);
  });

  it('returns null when there is none, and ignores snapshots of another schema', async () => {
    expect((await loadLatestSnapshot(bus.bus, { schema: 1 })).snapshot).toBeNull();
    const state = { schema: 0, n: 1 };
    await saveSnapshot(bus.bus, { schema: 0, seq: 10, hash: canonicalHash(state), state });
    expect((await loadLatestSnapshot(bus.bus, { schema: 1 })).snapshot).toBeNull();
    expect((await loadLatestSnapshot(bus.bus, { schema: 0 })).snapshot?.seq).toBe(10);
  });

  it('keeps the newest few, overwriting the oldest slot', async () => {
    for (const seq of [10, 20, 30, 40, 50]) {
      const state = { seq };
      await saveSnapshot(bus.bus, { schema: 1, seq, hash: canonicalHash(state), state }, { keep: 3 });
    }
    expect((await listSnapshots(bus.bus)).map((s) => s.seq)).toEqual([30, 40, 50]);
    expect((await loadLatestSnapshot(bus.bus, { schema: 1 })).snapshot?.state).toEqual({ seq: 50 });
  });

  it('passes over a snapshot whose state does not match its hash, for the next older one', async () => {
    const good = { seq: 10 };
    await saveSnapshot(bus.bus, { schema: 1, seq: 10, hash: canonicalHash(good), state: good });
    await saveSnapshot(bus.bus, { schema: 1, seq: 20, hash: canonicalHash({ other: true }), state: { seq: 20 } });
    const loaded = await loadLatestSnapshot(bus.bus, { schema: 1 });
    expect(loaded.snapshot?.seq).toBe(10);
    expect(loaded.skipped.map((s) => [s.seq, s.cause.code])).toEqual([[20, 'SNAPSHOT_UNREADABLE']]);
    expect((await loadLatestSnapshot(bus.bus, { schema: 1, verifyHash: false })).snapshot?.seq).toBe(20);
  });

  it('lists the store again when no snapshot it listed could be read, instead of giving up on snapshots (a replay of the whole log)', async () => {
    // the only snapshot does not check out; a good one is saved while the load waits to list again
    await saveSnapshot(bus.bus, { schema: 1, seq: 20, hash: canonicalHash({ other: true }), state: { seq: 20 } });
    const loading = loadLatestSnapshot(bus.bus, { schema: 1 });
    await new Promise((r) => setTimeout(r, 300));
    const good = { seq: 30 };
    await saveSnapshot(bus.bus, { schema: 1, seq: 30, hash: canonicalHash(good), state: good });
    const loaded = await loading;
    expect(loaded.snapshot?.seq).toBe(30);
    expect(loaded.skipped.map((s) => s.seq)).toEqual([20]);
    // a store with nothing in it is not listed again: a fresh cluster starts at once
    const started = Date.now();
    expect((await loadLatestSnapshot(bus.bus, { schema: 2 })).snapshot).toBeNull();
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('rejects with SNAPSHOT_TIMEOUT when the load stalls (its server stopped), and loads once it answers again', async () => {
    const state = bigState(1, 'c');
    await saveSnapshot(bus.bus, { schema: 1, seq: 7, hash: canonicalHash(state), state });
    const [stored] = await listSnapshots(bus.bus);
    const pid = bus.server?.pid ?? -1;
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      await expect(loadLatestSnapshot(bus.bus, { schema: 1, timeoutMs: 1_000 })).rejects.toMatchObject({ code: 'SNAPSHOT_TIMEOUT' });
      // so do a load by name and a listing (the auditor's: an audit waited on one for its whole bound)
      await expect(loadSnapshot(bus.bus, stored!.name, { timeoutMs: 500 })).rejects.toMatchObject({ code: 'SNAPSHOT_TIMEOUT' });
      await expect(listSnapshots(bus.bus, { timeoutMs: 500 })).rejects.toMatchObject({ code: 'SNAPSHOT_TIMEOUT' });
      // the bound, not a request's own 5 s timeout
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect((await loadLatestSnapshot(bus.bus, { schema: 1 })).snapshot?.seq).toBe(7);
    expect((await loadSnapshot(bus.bus, stored!.name)).seq).toBe(7);
  });

  it('stores snapshots in the muster_snapshots object store stream', async () => {
    const state = { a: 1 };
    await saveSnapshot(bus.bus, { schema: 1, seq: 1, hash: canonicalHash(state), state });
    const info = await bus.admin.streamInfo(`OBJ_${SNAPSHOT_BUCKET}`);
    expect(info.state.messages).toBeGreaterThanOrEqual(2);
  });
});
