// The raw readers the auditor and drills use: log entries with their bytes, stored decisions,
// inputs with their stored time, and one snapshot by name.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalHash, canonicalJson } from '@muster/core';
import {
  subjects,
  appendTransactions,
  listSnapshots,
  loadSnapshot,
  publishDecisions,
  publishInput,
  readDecisions,
  readInputs,
  readLogEntries,
  saveSnapshot,
  verifySnapshot,
} from '@muster/bus';
import type { LogEntry, StoredDecision } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { chain, tx } from './transactions.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

describe('readers for audits', () => {
  it('readLogEntries gives each transaction with its stored canonical bytes, without checking the chain', async () => {
    const txs = chain(2);
    await appendTransactions(bus.bus, txs, 0);
    await bus.admin.publish(subjects.log, canonicalJson(tx('not-a-hash', 3)));
    const entries: LogEntry[] = [];
    for await (const entry of readLogEntries(bus.bus)) entries.push(entry);
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(entries[0]?.tx).toEqual(txs[0]);
    expect(new TextDecoder().decode(entries[1]?.payload)).toBe(canonicalJson(txs[1]));
  });

  it('readDecisions gives msg id and log sequence, null when the header is missing', async () => {
    await publishDecisions(bus.bus, [{ subject: 'muster.decision.j1', payload: { type: 'GangCommitted' }, msgId: 'muster:4:0', logSeq: 4 }]);
    await bus.admin.publish('muster.stop.n1', '{"type":"Stop"}');
    const stored: StoredDecision[] = [];
    for await (const d of readDecisions(bus.bus)) stored.push(d);
    expect(stored).toEqual([
      { seq: 1, subject: 'muster.decision.j1', msgId: 'muster:4:0', logSeq: 4, data: '{"type":"GangCommitted"}' },
      { seq: 2, subject: 'muster.stop.n1', msgId: '', logSeq: null, data: '{"type":"Stop"}' },
    ]);
  });

  it('readInputs with withTime says when each input was stored', async () => {
    const before = Date.now();
    await publishInput(bus.bus, 'muster.in.cancel', { jobId: 'j1' });
    const timed: (number | undefined)[] = [];
    for await (const input of readInputs(bus.bus, { withTime: true })) timed.push(input.storedAt);
    expect(timed).toHaveLength(1);
    expect(timed[0]).toBeGreaterThanOrEqual(before - 1_000);
    expect(timed[0]).toBeLessThanOrEqual(Date.now() + 1_000);
    const untimed: (number | undefined)[] = [];
    for await (const input of readInputs(bus.bus)) untimed.push(input.storedAt);
    expect(untimed).toEqual([undefined]);
  });

  it('loadSnapshot reads one snapshot by the name listSnapshots gives', async () => {
    for (const seq of [5, 6]) {
      const state = { seq };
      await saveSnapshot(bus.bus, { schema: 1, seq, hash: canonicalHash(state), state });
    }
    const [older] = await listSnapshots(bus.bus);
    if (older === undefined) throw new Error('no snapshot listed');
    expect(await loadSnapshot(bus.bus, older.name)).toMatchObject({ seq: 5, state: { seq: 5 } });
    await expect(loadSnapshot(bus.bus, 'snapshot-99')).rejects.toMatchObject({ code: 'SNAPSHOT_UNREADABLE' });
  });

  it('verifySnapshot accepts a snapshot that hashes to its record and rejects one that does not, or is gone', async () => {
    const good = { seq: 5, nodes: { b: 1, a: 2 } };
    await saveSnapshot(bus.bus, { schema: 1, seq: 5, hash: canonicalHash(good), state: good });
    await saveSnapshot(bus.bus, { schema: 1, seq: 6, hash: canonicalHash({ seq: 7 }), state: { seq: 6 } });
    const [kept, altered] = await listSnapshots(bus.bus);
    if (kept === undefined || altered === undefined) throw new Error('two snapshots are not listed');
    await expect(verifySnapshot(bus.bus, kept.name)).resolves.toBeUndefined();
    await expect(verifySnapshot(bus.bus, altered.name)).rejects.toMatchObject({ code: 'SNAPSHOT_UNREADABLE' });
    await expect(verifySnapshot(bus.bus, 'snapshot-99')).rejects.toMatchObject({ code: 'SNAPSHOT_UNREADABLE' });
  });
});
