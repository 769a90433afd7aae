import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { DECISIONS_STREAM, LOG_STREAM, appendTransactions, connect, ensureStreams, lastLogSequence, lastPublishedDecision, publishDecisions, publishInput, readDecisions, subjects } from '@muster/bus';
import type { Bus, PublishedDecision, StoredDecision } from '@muster/bus';
import { makeTransaction, transactionHash } from '@muster/core';
import type { LoggedTransaction } from '@muster/core';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { readDecisionStream, readWholeLog } from '../support/musterLog.ts';
import { eventually, replicaStatus } from '../support/schedulerProcess.ts';

// the evidence must stand this long before a replica refuses for good (30 s in production)
const CONFIRM_MS = 800;
const JOBS = 6;
const node = { id: 'n1', labels: {}, capacity: { cpu: 64, memoryMb: 65_536, slots: 64 }, gpus: [] };
const job = (id: string) => ({ id, identity: { user: 'alice' }, tasks: 1, resources: { cpu: 1, memoryMb: 64 }, runtimeMs: 60_000 });

describe('a replica looks for lost writes on MUSTER_DECISIONS before it leads', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let admin: NatsAdmin;
  let history: LoggedTransaction[];
  let last: PublishedDecision;

  const start = (id: string): Promise<SchedulerHandle> =>
    startScheduler({ natsUrl: server.url, id, logger: pino({ level: 'silent' }), leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: 0, logLossConfirmMs: CONFIRM_MS });

  /** MUSTER_LOG made anew from `txs` (what JetStream kept after losing the rest). */
  async function rewriteLog(txs: readonly LoggedTransaction[]): Promise<void> {
    await admin.deleteStream(LOG_STREAM);
    await ensureStreams(bus, { replicas: 1 });
    const r = await appendTransactions(bus, txs.map((t) => t.tx), 0);
    expect(r.ok).toBe(true);
  }

  /** Every message of MUSTER_DECISIONS as stored, in stream order. */
  async function storedDecisions(): Promise<StoredDecision[]> {
    const out: StoredDecision[] = [];
    for await (const d of readDecisions(bus)) out.push(d);
    return out;
  }

  /** MUSTER_DECISIONS made anew from `msgs`, in that order, with their msg ids and log sequences. */
  async function rewriteDecisions(msgs: readonly StoredDecision[]): Promise<void> {
    await admin.deleteStream(DECISIONS_STREAM);
    await ensureStreams(bus, { replicas: 1 });
    const r = await publishDecisions(bus, msgs.map((m) => ({ subject: m.subject, payload: JSON.parse(m.data) as unknown, msgId: m.msgId, logSeq: m.logSeq! })));
    expect(r.ok).toBe(true);
  }

  /** Starts replica `id` on the log as it is, and expects it to refuse to lead, saying `why`, without writing anything. */
  async function expectRefusal(id: string, why: RegExp): Promise<string> {
    const end = await lastLogSequence(bus);
    const replica = await start(id);
    try {
      const status = await eventually(async () => {
        const s = await replicaStatus(bus, id);
        expect(s?.role).not.toBe('leader');
        return s?.refusedBecause == null ? null : s;
      }, 10_000, `${id} refusing`);
      expect(status.refusedBecause).toMatch(why);
      // well past several leases: it never took the lead, nobody wrote on the log
      await new Promise((r) => setTimeout(r, 1000));
      expect(replica.role()).toBe('standby');
      expect(await lastLogSequence(bus)).toBe(end);
      return status.refusedBecause!;
    } finally {
      await replica.stop();
    }
  }

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
    admin = await NatsAdmin.connect(server.url);
    const s1 = await start('s1');
    try {
      await eventually(() => s1.role() === 'leader', 10_000, 's1 leading');
      await publishInput(bus, subjects.nodeInput(node.id, 'register'), node, 'n1:register:1');
      for (let i = 0; i < JOBS; i++) await publishInput(bus, 'muster.in.submit', job(`j${i}`), `j${i}:1`);
      await eventually(async () => (await readDecisionStream(bus)).filter((m) => m.body.type === 'GangCommitted').length === JOBS || null, 15_000, 'every job committed');
    } finally {
      await s1.stop();
    }
  }, 60_000);

  afterAll(async () => {
    await admin?.close();
    await bus?.close();
    await server?.stop();
  });

  it('a replica started on a healthy log leads', async () => {
    const s2 = await start('s2');
    try {
      await eventually(() => s2.role() === 'leader', 10_000, 's2 leading');
      expect((await replicaStatus(bus, 's2'))?.refusedBecause).toBeNull();
    } finally {
      await s2.stop();
    }
    history = await readWholeLog(bus);
    last = (await lastPublishedDecision(bus))!;
    expect(last.logSeq).toBeGreaterThan(3);
    expect(last.logSeq).toBeLessThanOrEqual(history.length);
  }, 30_000);

  it('refuses when a published decision names a sequence past the log end', async () => {
    const kept = last.logSeq - 2;
    await rewriteLog(history.slice(0, kept));
    const why = await expectRefusal('s3', /MUSTER_LOG ends at/);
    expect(why).toContain(`log sequence ${last.logSeq}`);
    expect(why).toContain(`ends at ${kept}`);
    expect(why).toContain(last.msgId);
  }, 30_000);

  it('refuses when the log was written again past a published decision', async () => {
    const kept = history.slice(0, last.logSeq - 2);
    // another history grown over the lost sequences: empty facts chained on what was kept
    const forged: LoggedTransaction[] = [...kept];
    let prev = transactionHash(kept[kept.length - 1]!.tx);
    const at = kept[kept.length - 1]!.tx.at;
    while (forged.length < last.logSeq + 2) {
      const tx = makeTransaction(prev, { kind: 'fact', term: 99, leader: 'other', at, session: 0 }, []);
      forged.push({ seq: forged.length + 1, tx });
      prev = transactionHash(tx);
    }
    await rewriteLog(forged);
    const why = await expectRefusal('s4', /written again/);
    expect(why).toContain(`log sequence ${last.logSeq}`);
  }, 30_000);

  it('refuses when a leader on the shrunk log published after the lost decisions (the last one is backed)', async () => {
    const published = await storedDecisions();
    const kept = last.logSeq - 2;
    const lost = published.filter((d) => d.logSeq! > kept);
    expect(lost.length).toBeGreaterThan(0);
    // JetStream lost the tail of the log; a leader that never saw the lost decisions led on what was left
    await rewriteLog(history.slice(0, kept));
    await rewriteDecisions(published.filter((d) => d.logSeq! <= kept));
    const s5 = await start('s5');
    let ownDecisions: StoredDecision[];
    try {
      await eventually(() => s5.role() === 'leader', 10_000, 's5 leading on the shrunk log');
      await publishInput(bus, 'muster.in.submit', job('late'), 'late:1');
      ownDecisions = await eventually(async () => {
        const own = (await storedDecisions()).filter((d) => d.logSeq! > kept);
        return own.some((d) => d.subject === 'muster.decision.late' && d.logSeq! > last.logSeq) ? own : null;
      }, 15_000, 'a decision of s5 past the lost ones');
    } finally {
      await s5.stop();
    }
    // as MUSTER_DECISIONS holds them: the lost history's decisions, then those of the leader on the shrunk log
    await rewriteDecisions([...published.filter((d) => d.logSeq! <= kept), ...lost, ...ownDecisions]);
    const newest = (await lastPublishedDecision(bus))!;
    expect(newest.msgId).toBe(ownDecisions[ownDecisions.length - 1]!.msgId);
    expect(newest.logSeq).toBeLessThanOrEqual(await lastLogSequence(bus));
    const why = await expectRefusal('s6', /written again/);
    expect(lost.some((d) => why.includes(d.msgId)), why).toBe(true);
  }, 60_000);
});
