// What MUSTER_LOG's fence does to a follower's copy on a three-node nats-server 2.9.10 cluster
// (docs/drills.md, "A copy wedged by the fence"). Every replica checks Nats-Expected-Last-Msg-Id
// again when it applies a message, against the last msg id it knows. A follower that caught up from
// the stream's snapshot does not know it (the catchup stores the messages but leaves that id as it
// was), and one restarted on its own store rebuilds it only from the stream's dedupe window. When
// the id is wrong, the first message that expects it fails on that follower alone; 2.9.10 skips
// it, and every later message then fails its expected last sequence there: the copy stops for good
// while the leader and the raft group go on. muster's appends expected it until contract v1.2; they
// are now fenced by sequence alone (DESIGN.md §3), and such a copy catches up. The wedge itself is
// shown with raw publishes that expect the last msg id, as muster's pipelined appends did.
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOG_STREAM, appendTransactions, subjects } from '@muster/bus';
import { canonicalBytes } from '@muster/core';
import type { Bus } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { natsServerVersion } from '../support/natsServerVersion.ts';
import { chain, lastHash } from './transactions.ts';

/**
 * 60 kB of padding a transaction (in its `leader` field): 2.9.10 snapshots a stream once its raft
 * log holds 8 MB, so 200 such transactions make the leader compact, and a follower that lost its
 * store must catch up from the snapshot rather than from the raft log.
 */
const PADDING = 'x'.repeat(60_000);
const BATCH = 4;

let bus: TestBus;
beforeEach(async () => {
  // debug: 2.9.10 logs a message a follower failed to apply only at debug level
  bus = await startTestBus({ clusterSize: 3, extraConfig: 'debug: true' });
});
afterEach(async () => {
  await bus.stop();
});

interface LogTip {
  seq: number;
  hash: string | null;
}

interface Writer {
  follower: NatsServerHandle;
  bus: Bus;
  /** A raw connection to the same two nodes, for publishes muster no longer makes. */
  raw: NatsAdmin;
  log: LogTip;
}

/** A node that does not lead MUSTER_LOG, and a writer connected to the other two only. */
async function writerBesideFollower(): Promise<Writer> {
  const nodes = bus.cluster?.nodes ?? [];
  const leader = (await bus.admin.streamInfo(LOG_STREAM)).cluster?.leader;
  const follower = nodes.find((n) => n.name !== leader);
  if (follower === undefined) throw new Error(`no follower of ${LOG_STREAM} (leader ${String(leader)})`);
  const servers = nodes.filter((n) => n !== follower).map((n) => n.url);
  const writer = await bus.client({ name: 'fenced-writer', servers, timeoutMs: 10_000 });
  raws.push(await NatsAdmin.connect(servers));
  return { follower, bus: writer, raw: raws[raws.length - 1]!, log: { seq: 0, hash: null } };
}
const raws: NatsAdmin[] = [];
afterEach(async () => {
  await Promise.all(raws.splice(0).map((r) => r.close()));
});

/** How a batch is appended: by muster (fenced by sequence alone), or as muster's pipeline did before contract v1.2. */
type Fence = 'sequence' | 'last-msg-id';

/**
 * Appends one batch of `BATCH` chained transactions after the log's tip: with muster's
 * `appendTransactions`, or published raw, each with its hash as msg id and every one but the log's
 * first expecting the last msg id before it (as muster's pipelined appends did until contract v1.2).
 */
async function appendOnce(w: Writer, fence: Fence, leader: string): Promise<void> {
  const txs = chain(BATCH, w.log.hash, leader, w.log.seq + 1);
  if (fence === 'sequence') {
    const result = await appendTransactions(w.bus, txs, w.log.seq);
    if (!result.ok) throw new Error(`append after ${w.log.seq} failed: ${String(result.cause)}`);
  } else {
    let prev = w.log.hash;
    for (const [i, tx] of txs.entries()) {
      const hash = lastHash([tx]);
      const expectLastMsgId = prev === null ? {} : { expectLastMsgId: prev };
      await w.raw.publish(subjects.log, canonicalBytes(tx), { msgId: hash, expectLastSeq: w.log.seq + i, ...expectLastMsgId });
      prev = hash;
    }
  }
  w.log.seq += txs.length;
  w.log.hash = lastHash(txs);
}

/** Appends padded batches until the log has grown by `count` transactions. */
async function appendPadded(w: Writer, count: number, fence: Fence): Promise<void> {
  const until = w.log.seq + count;
  while (w.log.seq < until) await appendOnce(w, fence, PADDING);
}

/** Appends small batches with muster's appends, about 200 transactions a second, for `ms` milliseconds. */
async function appendFor(w: Writer, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await appendOnce(w, 'sequence', 'w');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** MUSTER_LOG's last sequence in one node's own store, from its monitoring port. */
async function copyLastSeq(node: NatsServerHandle): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${node.monitorPort}/jsz?streams=true`);
  const jsz = (await res.json()) as { account_details?: { stream_detail?: { name: string; state: { last_seq: number } }[] }[] };
  const detail = jsz.account_details?.flatMap((a) => a.stream_detail ?? []).find((s) => s.name === LOG_STREAM);
  return detail?.state.last_seq ?? 0;
}

/** The follower's copy once it reached the leader's tip or has not moved for 3 s. */
async function settledCopy(w: Writer): Promise<number> {
  let last = await copyLastSeq(w.follower);
  let since = Date.now();
  while (last < w.log.seq && Date.now() - since < 3_000) {
    await new Promise((r) => setTimeout(r, 200));
    const now = await copyLastSeq(w.follower);
    if (now !== last) [last, since] = [now, Date.now()];
  }
  return last;
}

/** The expectations the follower's log says messages failed when it applied them, in order. */
function applyFailures(node: NatsServerHandle): string[] {
  const log = readFileSync(join(node.dataDir, 'nats.log'), 'utf8');
  return [...log.matchAll(/got error processing message: last (msgid|sequence) mismatch/g)].map((m) => m[1] ?? '');
}

/** Kills the follower, empties its store, appends while it is down, starts it again and appends on. */
async function restartEmptyUnderAppends(fence: Fence): Promise<Writer> {
  const w = await writerBesideFollower();
  await appendPadded(w, 200, fence);
  await w.follower.kill();
  await rm(w.follower.storeDir, { recursive: true, force: true });
  await appendPadded(w, 200, fence);
  await w.follower.restart();
  await appendPadded(w, 120, fence);
  return w;
}

/**
 * The wedge is nats-server 2.9.10's (the pinned version: it skips the failed message silently and
 * its debug log names it); CI also runs these files on Debian's newest server, where the appends
 * muster makes must catch up all the same but the old appends' outcome is that server's own.
 */
const PINNED = natsServerVersion().startsWith('2.9.');

describe('a MUSTER_LOG copy that comes back under fenced appends', () => {
  it('catches up from a snapshot under muster\'s own appends (batches of 4, fenced by sequence alone)', async () => {
    const w = await restartEmptyUnderAppends('sequence');
    expect(await settledCopy(w)).toBe(w.log.seq);
    expect(applyFailures(w.follower)).toEqual([]);
  }, 120_000);

  it.runIf(PINNED)('stops for good after catching up from a snapshot when every message expects the last msg id before it (muster before v1.2, nats-server 2.9.10)', async () => {
    const w = await restartEmptyUnderAppends('last-msg-id');
    const copy = await settledCopy(w);
    // the copy holds the catchup and nothing after it: one message failed its last msg id, the
    // rest their last sequence
    expect(copy).toBeGreaterThan(0);
    expect(copy).toBeLessThan(w.log.seq);
    const failed = applyFailures(w.follower);
    expect(failed[0]).toBe('msgid');
    expect(failed.filter((f) => f === 'sequence').length).toBeGreaterThan(0);
  }, 120_000);

  it('catches up on its own store after 8 s down under muster\'s appends, whatever the dedupe window', async () => {
    // with last-msg-id expectations and a 5 s window, the restarted copy stopped at the first
    // message that expected the last msg id: its rebuilt last msg id was empty
    const w = await writerBesideFollower();
    await appendFor(w, 1_500);
    await w.follower.kill();
    await appendFor(w, 8_000);
    await w.follower.restart();
    await appendFor(w, 2_000);
    expect(await settledCopy(w)).toBe(w.log.seq);
    expect(applyFailures(w.follower)).toEqual([]);
  }, 120_000);
});
