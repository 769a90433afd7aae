// The guarantees the design rests on, proven on a three-node nats-server 2.9.10 cluster with R3 streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '@muster/core';
import {
  LOG_STREAM,
  appendTransactions,
  lastLogSequence,
  openLeaderLease,
  readLog,
  readLogMessage,
  streamDefinitions,
} from '@muster/bus';
import type { AppendResult, Bus } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { chain, lastHash } from './transactions.ts';

let bus: TestBus;
beforeAll(async () => {
  bus = await startTestBus({ clusterSize: 3 });
});
afterAll(async () => {
  await bus?.stop();
});

/** A client connected to one node only, so two writers really go through different servers. */
function clientOn(node: number, name: string, timeoutMs?: number): Promise<Bus> {
  const url = bus.urls[node];
  if (url === undefined) throw new Error(`no node ${node}`);
  return bus.client({ name, servers: [url], ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}

/** The last sequence of the log and the hash its next transaction must chain to. */
async function head(bus: Bus): Promise<{ seq: number; hash: string | null }> {
  const seq = await lastLogSequence(bus);
  if (seq === 0) return { seq, hash: null };
  const last = await readLogMessage(bus, seq);
  if (last === null) throw new Error(`no message at ${seq}`);
  return { seq, hash: lastHash([last.tx]) };
}

async function verifiedLength(bus: Bus): Promise<number> {
  let n = 0;
  for await (const _entry of readLog(bus)) n++;
  return n;
}

function apiCode(result: AppendResult): number | undefined {
  return result.ok ? undefined : (result.cause as { code?: number }).code;
}

describe('R3 cluster', () => {
  it('creates every stream with three replicas', async () => {
    for (const def of streamDefinitions) {
      const info = await bus.admin.streamInfo(def.config.name);
      expect(info.config.num_replicas).toBe(3);
      expect(info.cluster?.replicas?.length).toBe(2);
    }
  });

  it('gives a second writer on another node with a stale expectation a conflict', async () => {
    const a = await clientOn(0, 'writer-a');
    const b = await clientOn(2, 'writer-b');
    const start = await head(a);
    const won = await appendTransactions(a, chain(2, start.hash, 'a'), start.seq);
    expect(won).toEqual({ ok: true, seqs: [start.seq + 1, start.seq + 2] });
    const lost = await appendTransactions(b, chain(2, start.hash, 'b'), start.seq);
    expect(lost).toMatchObject({ ok: false, code: 'conflict', committed: [] });
    expect([10071, 10164]).toContain(apiCode(lost));
    expect(await lastLogSequence(a)).toBe(start.seq + 2);
  });

  it('keeps a stale batch out entirely when another writer got one message in first', async () => {
    const oldLeader = await clientOn(0, 'old-leader');
    const newLeader = await clientOn(1, 'new-leader');
    const start = await head(oldLeader);
    expect(await appendTransactions(newLeader, chain(1, start.hash, 'new'), start.seq)).toMatchObject({ ok: true });
    const stale = await appendTransactions(oldLeader, chain(4, start.hash, 'old'), start.seq);
    expect(stale).toMatchObject({ ok: false, code: 'conflict', committed: [] });
    expect(await lastLogSequence(oldLeader)).toBe(start.seq + 1);
  });

  it('lets exactly one of two racing writers win each round, leaving one verified chain', async () => {
    const a = await clientOn(0, 'racer-a');
    const b = await clientOn(2, 'racer-b');
    const rounds = 15;
    const startLength = await verifiedLength(a);
    for (let round = 0; round < rounds; round++) {
      const start = await head(a);
      const [ra, rb] = await Promise.all([
        appendTransactions(a, chain(2, start.hash, 'a', round * 10), start.seq),
        appendTransactions(b, chain(2, start.hash, 'b', round * 10), start.seq),
      ]);
      const winners = [ra, rb].filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      const loser = ra.ok ? rb : ra;
      expect(loser).toMatchObject({ ok: false, code: 'conflict', committed: [] });
    }
    expect(await verifiedLength(b)).toBe(startLength + 2 * rounds);
  });

  it('refuses a second lease creation and a stale compare-and-set', async () => {
    const a = await openLeaderLease((await clientOn(0, 'lease-a')));
    const b = await openLeaderLease((await clientOn(2, 'lease-b')));
    const created = await a.createLease('a', 1);
    if (!created.ok) throw new Error('create failed');
    const second = await b.createLease('b', 1);
    expect(second).toMatchObject({ ok: false, code: 'conflict' });
    const refreshed = await a.updateLease(created.revision, { id: 'a', term: 1 });
    expect(refreshed.ok).toBe(true);
    expect(await b.updateLease(created.revision, { id: 'b', term: 2 })).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('keeps appending through the survivors when the log leader is killed, and the restarted node catches up', async () => {
    const cluster = bus.cluster;
    if (cluster === null) throw new Error('cluster expected');
    const info = await bus.admin.streamInfo(LOG_STREAM);
    const leaderIndex = cluster.nodes.findIndex((_, i) => `n${i + 1}` === info.cluster?.leader);
    const leaderNode = cluster.nodes[leaderIndex];
    if (leaderNode === undefined) throw new Error(`log leader ${String(info.cluster?.leader)} not found`);
    await leaderNode.kill('SIGKILL');
    const survivor = await clientOn((leaderIndex + 1) % 3, 'survivor', 1_000);
    // the survivors elect a new stream leader (about 6 s on 2.9.10); until then requests time out
    let appended: Transaction[] = [];
    await expect
      .poll(
        async () => {
          const start = await head(survivor);
          appended = chain(3, start.hash, 'survivor', 1000);
          return (await appendTransactions(survivor, appended, start.seq)).ok;
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe(true);
    const total = await lastLogSequence(survivor);
    await leaderNode.restart();
    const returning = await clientOn(leaderIndex, 'returning');
    // the restarted node catches up in the background: poll until it has
    await expect.poll(() => verifiedLength(returning), { timeout: 20_000, interval: 250 }).toBe(total);
    expect((await readLogMessage(returning, total))?.tx).toEqual(appended[2]);
  });
});
