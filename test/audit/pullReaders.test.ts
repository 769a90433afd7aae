// The plain-pull readers the audit reads its three streams with (libs/bus pullBatches.ts): the
// same messages as the ordered readers, in order, over several pulls, ending at the last sequence
// when the read began, releasing their consumer, and working for a user confined to its own inbox.
import { afterEach, describe, expect, it } from 'vitest';
import {
  DECISIONS_STREAM,
  IN_STREAM,
  LOG_STREAM,
  appendTransactions,
  connect,
  ensureStreams,
  publishDecisions,
  publishInput,
  pullDecisionBatches,
  pullInputBatches,
  pullLogEntries,
  readDecisionBatches,
  readInputBatches,
  readLogEntries,
} from '@muster/bus';
import { makeTransaction, transactionHash } from '@muster/core';
import type { Transaction } from '@muster/core';
import { streamSeqOf } from '@muster/bus/testing';
import { startTestBus } from '../support/natsBus.ts';
import { startNatsServer } from '../support/natsServer.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus | null = null;
afterEach(async () => {
  await bus?.stop();
  bus = null;
});

async function consumers(b: TestBus, stream: string): Promise<number> {
  return b.admin.consumerCount(stream);
}

async function collect<T>(batches: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const batch of batches) out.push(batch);
  return out;
}

async function fill(b: TestBus, inputs: number, decisions: number, transactions: number): Promise<void> {
  for (let i = 1; i <= inputs; i++) await publishInput(b.bus, 'muster.in.cancel', { jobId: `j${i}` }, `cancel-${i}`);
  await publishDecisions(
    b.bus,
    Array.from({ length: decisions }, (_, i) => ({ subject: `muster.decision.j${i}`, payload: { i }, msgId: `muster:${i + 1}:0`, logSeq: i + 1 })),
  );
  const txs: Transaction[] = [];
  let prev: string | null = null;
  for (let i = 0; i < transactions; i++) {
    const tx = makeTransaction(prev, { kind: 'election', term: i + 1, leader: 's1', at: 1000 + i, session: 0 }, [{ type: 'LeaderElected', term: i + 1, leader: 's1' }]);
    txs.push(tx);
    prev = transactionHash(tx);
  }
  expect((await appendTransactions(b.bus, txs, 0)).ok).toBe(true);
}

describe('plain-pull readers', () => {
  it('fail with READ_STALLED, not wait for ever, when their consumer goes while the caller is busy (the server reaped an idle one)', async () => {
    bus = await startTestBus();
    await ensureStreams(bus.bus, { replicas: 1 });
    await fill(bus, 1_000, 0, 0);
    const batches = pullInputBatches(bus.bus, { batch: 100 })[Symbol.asyncIterator]();
    expect((await batches.next()).done).toBe(false);
    expect(await bus.admin.deleteConsumers(IN_STREAM)).toBe(1);
    const started = Date.now();
    await expect((async () => {
      for (;;) if ((await batches.next()).done === true) return;
    })()).rejects.toMatchObject({ code: 'READ_STALLED' });
    // the stall bound (two pull expiries) and the watchdog's second
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('read what the ordered readers read, in order, over several pulls, up to the last sequence when the read began', async () => {
    const b = (bus = await startTestBus());
    await fill(b, 23, 17, 9);
    const ordered = (await collect(readInputBatches(b.bus, { fromSeq: 2, withMsgId: false }))).flat();
    const batches: Awaited<ReturnType<typeof collect<(typeof ordered)[number]>>> = [];
    for await (const batch of pullInputBatches(b.bus, { fromSeq: 2, batch: 4 })) {
      // published after the read began: not part of it
      if (batches.length === 0) await publishInput(b.bus, 'muster.in.cancel', { jobId: 'late' }, 'late');
      batches.push(batch);
    }
    expect(batches.flat()).toEqual(ordered);
    expect(batches.flat().map((i) => i.seq)).toEqual(Array.from({ length: 22 }, (_, i) => i + 2));
    expect(Math.max(...batches.map((x) => x.length))).toBeLessThanOrEqual(8);

    const decisions = (await collect(pullDecisionBatches(b.bus, { batch: 5 }))).flat();
    expect(decisions).toEqual((await collect(readDecisionBatches(b.bus))).flat());
    expect(decisions[0]).toEqual({ seq: 1, subject: 'muster.decision.j0', msgId: 'muster:1:0', logSeq: 1, data: '{"i":0}' });

    const entries: { seq: number; tx: Transaction }[] = [];
    for await (const e of pullLogEntries(b.bus, { fromSeq: 3 })) entries.push({ seq: e.seq, tx: e.tx });
    const expected: { seq: number; tx: Transaction }[] = [];
    for await (const e of readLogEntries(b.bus, { fromSeq: 3 })) expected.push({ seq: e.seq, tx: e.tx });
    expect(entries).toEqual(expected);
    expect(entries.map((e) => e.seq)).toEqual([3, 4, 5, 6, 7, 8, 9]);

    expect(await collect(pullInputBatches(b.bus, { fromSeq: 100 }))).toEqual([]);
    for (const stream of [IN_STREAM, DECISIONS_STREAM, LOG_STREAM]) expect(await consumers(b, stream)).toBe(0);
  });

  it('release the consumer when the caller stops early or the read is aborted', async () => {
    const b = (bus = await startTestBus());
    await fill(b, 20, 20, 1);
    for await (const batch of pullInputBatches(b.bus, { batch: 4 })) {
      expect(batch[0]?.seq).toBe(1);
      break;
    }
    expect(await consumers(b, IN_STREAM)).toBe(0);
    const abort = new AbortController();
    let seen = 0;
    for await (const batch of pullDecisionBatches(b.bus, { batch: 4, signal: abort.signal })) {
      seen += batch.length;
      abort.abort();
    }
    expect(seen).toBeGreaterThan(0);
    expect(seen).toBeLessThan(20);
    expect(await consumers(b, DECISIONS_STREAM)).toBe(0);
  });

  it('work for a user who may subscribe only below its own inbox prefix', async () => {
    const server = await startNatsServer({
      extraConfig: `authorization { users: [
        { user: admin, password: a, permissions: { publish: ">", subscribe: ">" } },
        { user: auditor, password: b, permissions: {
          publish: { allow: ["$JS.API.INFO", "$JS.API.STREAM.INFO.*", "$JS.API.CONSUMER.CREATE.*.*", "$JS.API.CONSUMER.CREATE.*.*.>", "$JS.API.CONSUMER.MSG.NEXT.*.*", "$JS.API.CONSUMER.DELETE.*.*"] },
          subscribe: { allow: ["_INBOX_auditor.>"] } } }
      ] }`,
    });
    const admin = await connect({ servers: server.url, name: 'admin', user: 'admin', pass: 'a' });
    const auditor = await connect({ servers: server.url, name: 'auditor', user: 'auditor', pass: 'b', inboxPrefix: '_INBOX_auditor' });
    try {
      await ensureStreams(admin, { replicas: 1 });
      for (let i = 1; i <= 9; i++) await publishInput(admin, 'muster.in.cancel', { jobId: `j${i}` }, `cancel-${i}`);
      const inputs = (await collect(pullInputBatches(auditor, { batch: 4 }))).flat();
      expect(inputs.map((i) => i.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    } finally {
      await auditor.close();
      await admin.close();
      await server.stop();
    }
  }, 60_000);

  it('read the stream sequence from both reply subject layouts and take a status for none', () => {
    expect(streamSeqOf('$JS.ACK.MUSTER_IN.c1.1.42.40.1700000000000000000.7')).toBe(42);
    expect(streamSeqOf('$JS.ACK._.ACCHASH.MUSTER_IN.c1.1.42.40.1700000000000000000.7.rnd')).toBe(42);
    expect(streamSeqOf('')).toBeNull();
    expect(streamSeqOf(undefined)).toBeNull();
    expect(streamSeqOf('_INBOX.x.y')).toBeNull();
  });
});
