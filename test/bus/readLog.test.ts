import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson, transactionHash } from '@muster/core';
import type { LoggedTransaction } from '@muster/core';
import {
  LOG_STREAM,
  subjects,
  appendTransactions,
  ensureStreams,
  isBusError,
  isChainBroken,
  lastLogSequence,
  readLog,
  readLogMessage,
  streamDefinitions,
} from '@muster/bus';
import type { ReadLogOptions } from '@muster/bus';
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

async function collect(opts: ReadLogOptions = {}, from: TestBus = bus): Promise<LoggedTransaction[]> {
  const out: LoggedTransaction[] = [];
  for await (const entry of readLog(from.bus, opts)) out.push(entry);
  return out;
}

// a server whose log was created without deny_delete: only such a log can lose a message (the
// server refuses to lift deny_delete once set)
async function deletableLog(): Promise<TestBus> {
  const own = await startTestBus({ ensure: false });
  try {
    const deletable = streamDefinitions
      .filter((d) => d.config.name === LOG_STREAM)
      .map((d) => ({ ...d, config: { ...d.config, deny_delete: false } }));
    await ensureStreams(own.bus, { replicas: 1, definitions: deletable });
    return own;
  } catch (err) {
    await own.stop();
    throw err;
  }
}

async function readError(from: TestBus | ReadLogOptions = {}): Promise<unknown> {
  try {
    await ('bus' in from ? collect({}, from) : collect(from));
  } catch (err) {
    return err;
  }
  throw new Error('expected the read to fail');
}

describe('readLog', () => {
  it('ends at once on an empty log, and when starting past the end', async () => {
    expect(await collect()).toEqual([]);
    await appendTransactions(bus.bus, chain(2), 0);
    expect(await collect({ fromSeq: 3 })).toEqual([]);
  });

  it('replays from a sequence to the last sequence at call time, verifying the chain', async () => {
    const txs = chain(25);
    await appendTransactions(bus.bus, txs, 0);
    const all = await collect();
    expect(all.map((e) => e.seq)).toEqual(txs.map((_, i) => i + 1));
    expect(all.map((e) => e.tx)).toEqual(txs);
    const tail = await collect({ fromSeq: 11, prevHash: lastHash(txs.slice(0, 10)) });
    expect(tail.map((e) => e.seq)).toEqual(txs.slice(10).map((_, i) => i + 11));
  });

  it('checks the first prev against prevHash when resuming', async () => {
    await appendTransactions(bus.bus, chain(3), 0);
    const err = await readError({ fromSeq: 2, prevHash: 'f'.repeat(64) });
    expect(isBusError(err, 'CHAIN_BROKEN')).toBe(true);
    expect((err as { seq?: number }).seq).toBe(2);
  });

  it('tails: sees a transaction appended after the replay, until aborted', async () => {
    const txs = chain(3);
    await appendTransactions(bus.bus, txs, 0);
    const abort = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const { seq } of readLog(bus.bus, { tail: true, signal: abort.signal })) {
        seen.push(seq);
        if (seq === 3) {
          const writer = await bus.client({ name: 'writer' });
          expect(await appendTransactions(writer, chain(1, lastHash(txs), 'test-leader', 9), 3)).toEqual({ ok: true, seqs: [4] });
        }
        if (seq === 4) abort.abort();
      }
    })();
    await reading;
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('fails with CHAIN_BROKEN and the sequence when a prev does not match', async () => {
    const txs = chain(3);
    await appendTransactions(bus.bus, txs, 0);
    // a writer that bypasses appendTransactions' own check
    await bus.admin.publish(subjects.log, canonicalJson(tx('0'.repeat(64), 4)), { expectLastSeq: 3 });
    const err = await readError();
    expect(isChainBroken(err)).toBe(true);
    expect(isBusError(err, 'CHAIN_BROKEN')).toBe(true);
    expect((err as { seq?: number }).seq).toBe(4);
    expect((await collect({ verifyChain: false })).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('hashes a transaction written as non-canonical JSON by its canonical form', async () => {
    const first = tx(null, 1);
    // same transaction, keys in another order and spaced: its bytes do not hash to transactionHash
    const text = JSON.stringify(Object.fromEntries(Object.entries(first).reverse()), null, 1);
    await bus.admin.publish(subjects.log, text, { expectLastSeq: 0 });
    const next = chain(2, transactionHash(first), 'test-leader', 2);
    expect(await appendTransactions(bus.bus, next, 1)).toEqual({ ok: true, seqs: [2, 3] });
    expect((await collect()).map((e) => e.tx)).toEqual([first, ...next]);
  });

  it('fails with CHAIN_BROKEN when the first transaction of the log has a prev', async () => {
    await bus.admin.publish(subjects.log, canonicalJson(tx(transactionHash(tx(null, 0)), 1)));
    const err = await readError();
    expect(isBusError(err, 'CHAIN_BROKEN')).toBe(true);
    expect((err as { seq?: number }).seq).toBe(1);
  });

  it('fails with LOG_GAP when a message is missing', async () => {
    const own = await deletableLog();
    try {
      await appendTransactions(own.bus, chain(3), 0);
      await own.admin.deleteMessage(LOG_STREAM, 2);
      const err = await readError(own);
      expect(isBusError(err, 'LOG_GAP')).toBe(true);
      expect((err as { seq?: number }).seq).toBe(3);
    } finally {
      await own.stop();
    }
  });

  it('fails with READ_SHORT when its consumer has nothing more short of the stream\'s last sequence, instead of ending there', async () => {
    // what a consumer on a NATS node still refilling its copy does; here a log whose last
    // message is deleted (a stream without deny_delete): the stream's last sequence stays 3
    const own = await deletableLog();
    try {
      await appendTransactions(own.bus, chain(3), 0);
      await own.admin.deleteMessage(LOG_STREAM, 3);
      const seen: number[] = [];
      let err: unknown = null;
      try {
        for await (const entry of readLog(own.bus)) seen.push(entry.seq);
      } catch (e) {
        err = e;
      }
      // before: the read ended after 2, as if the log ended there
      expect(seen).toEqual([1, 2]);
      expect(isBusError(err, 'READ_SHORT')).toBe(true);
      expect((err as { seq?: number }).seq).toBe(2);
    } finally {
      await own.stop();
    }
  }, 30_000);

  // a server that stops answering for a while during a bulk read
  it('given a log of 3,000 transactions, when the server is stopped for 8 s during the read, then the read ends with every one or fails; it never ends short', async () => {
    const txs = chain(3_000);
    for (let i = 0; i < txs.length; i += 500) await appendTransactions(bus.bus, txs.slice(i, i + 500), i);
    const pid = bus.server?.pid ?? -1;
    const seqs: number[] = [];
    let stopped = false;
    let outcome: 'read' | 'stalled' = 'read';
    try {
      for await (const entry of readLog(bus.bus)) {
        seqs.push(entry.seq);
        // a pull of 512 expires (5 s) while the server is stopped: before, the read ended there
        if (!stopped && seqs.length === 600) {
          stopped = true;
          process.kill(pid, 'SIGSTOP');
          setTimeout(() => process.kill(pid, 'SIGCONT'), 8_000);
        }
      }
    } catch (err) {
      if (!isBusError(err, 'READ_SHORT')) throw err;
      outcome = 'stalled';
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(stopped).toBe(true);
    if (outcome === 'read') expect(seqs.length).toBe(3_000);
    // a read that failed is read again by its caller; one that ended short would be taken for the whole log
    else expect(seqs.length).toBeLessThan(3_000);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  }, 60_000);

  it('fails with BAD_MESSAGE and the sequence on a message that is not a transaction', async () => {
    await appendTransactions(bus.bus, chain(1), 0);
    await bus.admin.publish(subjects.log, 'not json');
    const err = await readError();
    expect(isBusError(err, 'BAD_MESSAGE')).toBe(true);
    expect((err as { seq?: number }).seq).toBe(2);
  });

  it('reads one message by sequence and the last sequence', async () => {
    const txs = chain(3);
    await appendTransactions(bus.bus, txs, 0);
    expect(await readLogMessage(bus.bus, 2)).toEqual({ seq: 2, tx: txs[1], hash: transactionHash(txs[1]!) });
    expect(await readLogMessage(bus.bus, 9)).toBeNull();
    expect(await lastLogSequence(bus.bus)).toBe(3);
  });

  it('keeps acknowledged transactions across a kill -9 of the server', async () => {
    const server = bus.server;
    if (server === null) throw new Error('single server expected');
    const txs = chain(50);
    await appendTransactions(bus.bus, txs, 0);
    await server.kill('SIGKILL');
    await server.restart();
    // a fresh connection: requests made while the old one reconnects wait out their timeout
    const after = await bus.client({ name: 'after-restart' });
    expect(await lastLogSequence(after)).toBe(50);
    const replayed: unknown[] = [];
    for await (const entry of readLog(after)) replayed.push(entry.tx);
    expect(replayed).toEqual(txs);
  });
});
