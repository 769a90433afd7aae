// A leader that died in the middle of a pipelined publish call can leave MUSTER_DECISIONS with a
// hole: some messages of the call lost, later ones stored. Its successor must fill the hole, not
// resume after the last decision published (then the agents never get those binds).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { DECISIONS_STREAM, connect, ensureStreams, publishDecisions, publishInput, readDecisions, subjects } from '@muster/bus';
import type { Bus, StoredDecision } from '@muster/bus';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { eventually } from '../support/schedulerProcess.ts';

const JOBS = 6;
const node = { id: 'n1', labels: {}, capacity: { cpu: 64, memoryMb: 65_536, slots: 64 }, gpus: [] };
const job = (id: string) => ({ id, identity: { user: 'alice' }, tasks: 1, resources: { cpu: 1, memoryMb: 64 }, runtimeMs: 600_000 });

// snapshotEvery 1: the successor rebuilds from a snapshot at the log's end, so the transactions of
// the published tail are not at hand and the catch-up reads them
describe.each([
  { snapshotEvery: 0, txs: 'at hand' },
  { snapshotEvery: 1, txs: 'read from the log' },
])('a successor fills a hole its predecessor left in MUSTER_DECISIONS (transactions $txs)', ({ snapshotEvery }) => {
  let server: NatsServerHandle;
  let bus: Bus;
  let admin: NatsAdmin;

  const start = (id: string): Promise<SchedulerHandle> =>
    startScheduler({ natsUrl: server.url, id, logger: pino({ level: 'silent' }), leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery });

  async function storedDecisions(): Promise<StoredDecision[]> {
    const out: StoredDecision[] = [];
    for await (const d of readDecisions(bus)) out.push(d);
    return out;
  }

  beforeAll(async () => {
    server = await startNatsServer();
    bus = await connect({ servers: server.url, name: 'test' });
    admin = await NatsAdmin.connect(server.url);
  });

  afterAll(async () => {
    await admin?.close();
    await bus?.close();
    await server?.stop();
  });

  it('re-publishes the missing decisions below the last one published, and nothing twice', async () => {
    const s1 = await start('s1');
    try {
      await eventually(() => s1.role() === 'leader', 10_000, 's1 leading');
      await publishInput(bus, subjects.nodeInput(node.id, 'register'), node, 'n1:register:1');
      for (let i = 0; i < JOBS; i++) {
        await publishInput(bus, 'muster.in.submit', job(`j${i}`), `j${i}:1`);
        // one commit per transaction: the hole below is a whole transaction's decisions and one more
        await eventually(async () => (await storedDecisions()).some((d) => d.subject === `muster.decision.j${i}`) || null, 10_000, `j${i} committed`);
      }
    } finally {
      await s1.stop();
    }
    const all = await storedDecisions();
    const seqs = [...new Set(all.map((d) => d.logSeq!))].sort((a, b) => a - b);
    expect(seqs.length).toBeGreaterThanOrEqual(JOBS);
    // lost: every message of the third-last transaction with decisions, and the bind of the second-last
    const whole = seqs[seqs.length - 3]!;
    const bind = all.find((d) => d.logSeq === seqs[seqs.length - 2] && d.subject === `muster.bind.${node.id}`)!;
    const lost = new Set([...all.filter((d) => d.logSeq === whole).map((d) => d.msgId), bind.msgId]);
    expect(lost.size).toBeGreaterThanOrEqual(3);
    // MUSTER_DECISIONS as the half-failed call left it (a new stream: its dedupe window holds what was kept)
    await admin.deleteStream(DECISIONS_STREAM);
    await ensureStreams(bus, { replicas: 1 });
    const kept = all.filter((d) => !lost.has(d.msgId));
    const r = await publishDecisions(bus, kept.map((m) => ({ subject: m.subject, payload: JSON.parse(m.data) as unknown, msgId: m.msgId, logSeq: m.logSeq! })));
    expect(r.ok).toBe(true);

    const s2 = await start('s2');
    try {
      await eventually(() => s2.role() === 'leader', 10_000, 's2 leading');
      const after = await eventually(async () => {
        const stored = await storedDecisions();
        return [...lost].every((id) => stored.some((d) => d.msgId === id)) ? stored : null;
      }, 10_000, 'the lost decisions re-published');
      // each once, with what the log says (the kept ones were not published again)
      expect(after.map((d) => d.msgId).sort()).toEqual(all.map((d) => d.msgId).sort());
      const bodies = new Map(all.map((d) => [d.msgId, d.data]));
      for (const d of after) expect(d.data, d.msgId).toBe(bodies.get(d.msgId));
    } finally {
      await s2.stop();
    }
  }, 60_000);
});
