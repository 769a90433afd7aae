import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BusError,
  LOG_STREAM,
  subjects,
  MAX_TRANSACTION_BYTES,
  appendTransactions,
  ensureStreams,
  isBusError,
  lastLogSequence,
  readLog,
  streamDefinitions,
} from '@muster/bus';
import type { StreamDefinition } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { chain, lastHash, tx } from './transactions.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

async function logSeqs(): Promise<number[]> {
  const seqs: number[] = [];
  for await (const { seq } of readLog(bus.bus)) seqs.push(seq);
  return seqs;
}

function apiCode(cause: unknown): number | undefined {
  return (cause as { code?: number }).code;
}

describe('appendTransactions (R1)', () => {
  it('appends a batch at consecutive sequences after the expected one', async () => {
    const first = chain(3);
    expect(await appendTransactions(bus.bus, first, 0)).toEqual({ ok: true, seqs: [1, 2, 3] });
    const next = chain(2, lastHash(first), 'test-leader', 10);
    expect(await appendTransactions(bus.bus, next, 3)).toEqual({ ok: true, seqs: [4, 5] });
    expect(await appendTransactions(bus.bus, [], 5)).toEqual({ ok: true, seqs: [] });
    expect(await lastLogSequence(bus.bus)).toBe(5);
  });

  it('gives a second writer with a stale expectation a conflict, and nothing of it lands', async () => {
    const other = await bus.client({ name: 'stale-writer' });
    const winner = chain(1, null, 'a');
    expect(await appendTransactions(bus.bus, winner, 0)).toEqual({ ok: true, seqs: [1] });
    const result = await appendTransactions(other, chain(2, null, 'b'), 0);
    expect(result).toMatchObject({ ok: false, code: 'conflict', committed: [] });
    if (result.ok) throw new Error('unreachable');
    expect(apiCode(result.cause)).toBe(10071);
    expect(await lastLogSequence(bus.bus)).toBe(1);
  });

  it('keeps a stale batch out entirely when another writer got exactly one message in first', async () => {
    // fenced by sequence alone, the stale batch's second transaction would find sequence 2 and land
    const base = chain(1);
    await appendTransactions(bus.bus, base, 0);
    const other = await bus.client({ name: 'new-leader' });
    const elected = chain(1, lastHash(base), 'new-leader', 100);
    expect(await appendTransactions(other, elected, 1)).toEqual({ ok: true, seqs: [2] });
    const stale = chain(3, lastHash(base), 'old-leader', 50);
    const result = await appendTransactions(bus.bus, stale, 1);
    expect(result).toMatchObject({ ok: false, code: 'conflict', committed: [] });
    expect(await lastLogSequence(bus.bus)).toBe(2);
    expect(await logSeqs()).toEqual([1, 2]);
  });

  it('commits only the clean prefix when an early transaction of a pipelined batch fails', async () => {
    // a log stream with a tiny max_msg_size makes the third transaction fail on the server
    const tiny: StreamDefinition[] = streamDefinitions
      .filter((d) => d.config.name === LOG_STREAM)
      .map((d) => ({ ...d, config: { ...d.config, max_msg_size: 2048 } }));
    await ensureStreams(bus.bus, { replicas: 1, definitions: tiny });
    const head = chain(2);
    const big = { ...tx(lastHash(head), 3), leader: 'x'.repeat(4096) };
    const batch = [...head, big, ...chain(2, lastHash([big]), 'test-leader', 4)];
    const result = await appendTransactions(bus.bus, batch, 0);
    expect(result).toMatchObject({ ok: false, code: 'error', committed: [1, 2] });
    expect(await lastLogSequence(bus.bus)).toBe(2);
    expect(await logSeqs()).toEqual([1, 2]);
  });

  it('refuses a batch that does not chain, before publishing anything', async () => {
    const txs = [...chain(2), tx('not-the-hash', 3)];
    const result = await appendTransactions(bus.bus, txs, 0);
    expect(result).toMatchObject({ ok: false, code: 'error', committed: [] });
    if (result.ok) throw new Error('unreachable');
    expect(isBusError(result.cause, 'CHAIN_BROKEN')).toBe(true);
    expect(await lastLogSequence(bus.bus)).toBe(0);
  });

  it('refuses a transaction over MAX_TRANSACTION_BYTES, before publishing anything', async () => {
    const huge = { ...tx(null, 1), leader: 'x'.repeat(MAX_TRANSACTION_BYTES) };
    const result = await appendTransactions(bus.bus, [huge], 0);
    expect(result).toMatchObject({ ok: false, code: 'error', committed: [] });
    if (result.ok) throw new Error('unreachable');
    expect(result.cause).toBeInstanceOf(BusError);
    expect((result.cause as BusError).code).toBe('TRANSACTION_TOO_LARGE');
    expect(await lastLogSequence(bus.bus)).toBe(0);
  });

  it('fences by sequence alone: no msg id, no expected last msg id, so a repeat of a landed append is a conflict', async () => {
    const txs = chain(2);
    expect(await appendTransactions(bus.bus, txs, 0)).toEqual({ ok: true, seqs: [1, 2] });
    for (const seq of [1, 2]) {
      const raw = await bus.admin.message(LOG_STREAM, seq);
      expect(raw?.header('Nats-Msg-Id')).toBe('');
      expect(raw?.header('Nats-Expected-Last-Msg-Id')).toBe('');
    }
    // no msg-id dedupe: an append whose ack was lost and is sent again is fenced off; the writer
    // steps down and reads from the log what landed
    const repeat = await appendTransactions(bus.bus, txs, 0);
    expect(repeat).toMatchObject({ ok: false, code: 'conflict', committed: [] });
    const misplaced = await appendTransactions(bus.bus, txs.slice(1), 5);
    expect(misplaced).toMatchObject({ ok: false, code: 'conflict', committed: [] });
    expect(await lastLogSequence(bus.bus)).toBe(2);
  });

  it('reports an unanswered append as a timeout: its outcome is unknown until the log is read', async () => {
    const server = bus.server;
    if (server === null) throw new Error('single server expected');
    const slow = await bus.client({ name: 'slow-writer' });
    process.kill(server.pid, 'SIGSTOP');
    let result;
    try {
      // let the stop take hold before the publish leaves
      await new Promise((resolve) => setTimeout(resolve, 100));
      result = await appendTransactions(slow, chain(1), 0, { timeoutMs: 300 });
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
    expect(result).toMatchObject({ ok: false, code: 'timeout', committed: [] });
    // the server got the message before it froze: re-syncing from the log tells what happened
    await expect.poll(() => lastLogSequence(bus.bus), { timeout: 5_000 }).toBe(1);
    const raw = await bus.admin.message(LOG_STREAM, 1);
    expect(raw?.subject).toBe(subjects.log);
  });
});

describe('appendTransactions: a stale append after a foreign write of as many transactions', () => {
  it('lands by sequence alone: why a writer never sends an append before the one before it landed (AppendPipeline)', async () => {
    const base = chain(2);
    expect((await appendTransactions(bus.bus, base, 0)).ok).toBe(true);
    // the stale writer planned 3 transactions after 2 (they never land) and a 4th after them
    const planned = chain(3, lastHash(base), 'stale', 10);
    const tail = chain(1, lastHash(planned), 'stale', 20);
    // meanwhile a new leader wrote 3 transactions of its own
    expect((await appendTransactions(bus.bus, chain(3, lastHash(base), 'new', 30), 2)).ok).toBe(true);
    expect((await appendTransactions(bus.bus, planned, 2)).ok).toBe(false);
    // the stale tail finds exactly the sequence it expects: had it been in flight with `planned`, it
    // would have broken the log's chain (test/scheduler/appendPipeline.test.ts: it is never sent)
    expect((await appendTransactions(bus.bus, tail, 5)).ok).toBe(true);
  });
});
