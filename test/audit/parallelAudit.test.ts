import { afterAll, describe, expect, it } from 'vitest';
import { appendTransactions, connect, ensureStreams, publishDecisions, publishInput, saveSnapshot } from '@muster/bus';
import type { Bus, ConnectOptions } from '@muster/bus';
import { auditLog } from '@muster/auditor';
import type { AuditReport } from '@muster/auditor';
import { STATE_SCHEMA, canonicalHash, decisionMessages, foldTransactions, initialState, shardGet } from '@muster/core';
import type { Input, LoggedTransaction, State } from '@muster/core';
import { startNatsServer } from '@muster/stack';
import type { NatsServerHandle } from '@muster/stack';
import { PARALLEL_LOG_BYTES } from '@muster/auditor';
import { lastSplit, splitPoint, useWorker } from '@muster/auditor/testing';
import { comparable } from './comparableReport.ts';
import { copyLog, golden, rechain } from './histories.ts';

// Over NATS the audit splits the log at a stored snapshot: a worker thread audits the log after it
// from the snapshot's state while the main thread audits the log up to it, and the worker's
// findings are taken once the main thread's replay reached the snapshot with the same state.
// Whatever a log holds, and whether the split is taken or not, the report must be the one the audit
// makes on one thread. Each case writes a golden history onto a nats-server of its own (MUSTER_LOG,
// MUSTER_IN with the same sequences, MUSTER_DECISIONS as a leader would publish it, a snapshot of
// the replayed state near the middle), altered or not, and audits it both ways.

interface Loaded {
  server: NatsServerHandle;
  bus: Bus;
  /** What the bus connected with: the worker connects the same way. */
  connection: ConnectOptions;
  /** Where the stored snapshot is. */
  snapshotSeq?: number;
}

const started: Loaded[] = [];

afterAll(async () => {
  for (const s of started) {
    await s.bus.close().catch(() => undefined);
    await s.server.stop();
  }
});

interface Alterations {
  /** Alters the log (then re-chained from the first transaction, as a forger would). */
  log?: (log: LoggedTransaction[]) => void;
  /** Alters an input before it is published. */
  input?: (input: Input) => Input;
  /** Alters a decision message's payload before it is published (null: leave it out). */
  decision?: (msgId: string, payload: unknown) => unknown;
  /** Alters the state stored as the snapshot (its record then hashes the altered state, as a forger would). */
  snapshot?: (state: State) => State;
  /** Where the snapshot is (default: `splitSeq` of the log). */
  snapshotSeq?: number;
}

async function load(name: string, alter: Alterations = {}): Promise<Loaded> {
  const g = golden(name);
  const server = await startNatsServer();
  const connection = { servers: server.url, name: 'parallel-audit-test' };
  const bus = await connect(connection);
  const loaded = { server, bus, connection };
  started.push(loaded);
  await ensureStreams(bus, { replicas: 1 });
  const log = copyLog(g.log);
  if (alter.log !== undefined) {
    alter.log(log);
    rechain(log);
  }
  for (const input of [...g.inputs].sort((a, b) => a.seq - b.seq)) {
    const published = alter.input?.(input) ?? input;
    const ack = await publishInput(bus, published.subject, published.data);
    expect(ack.seq).toBe(input.seq);
  }
  expect((await appendTransactions(bus, log.map((l) => l.tx), 0)).ok).toBe(true);
  // the decision messages of the unaltered log, as its leader published them
  let state: State = initialState();
  const messages = [];
  for (const entry of g.log) {
    state = foldTransactions(state, [entry]);
    const after = state;
    for (const m of decisionMessages(entry.seq, entry.tx, (id) => shardGet(after.jobs, id))) {
      const payload = alter.decision === undefined ? m.payload : alter.decision(m.msgId, m.payload);
      if (payload !== null) messages.push({ ...m, payload });
    }
  }
  expect((await publishDecisions(bus, messages)).ok).toBe(true);
  // a snapshot of the unaltered replay after the transaction nearest the middle that ends a session or is no session part
  const at = alter.snapshotSeq ?? splitSeq(g.log);
  let snapshot = foldTransactions(initialState(), g.log.filter((l) => l.seq <= at));
  if (alter.snapshot !== undefined) snapshot = alter.snapshot(structuredClone(snapshot));
  await saveSnapshot(bus, { schema: STATE_SCHEMA, seq: at, hash: canonicalHash(snapshot), state: snapshot }, { keep: 5 });
  return { ...loaded, snapshotSeq: at };
}

/** The sequences of a log after which no session is open. */
function closedSeqs(log: readonly LoggedTransaction[]): number[] {
  return log.filter((l) => l.tx.kind !== 'session' || l.tx.part === l.tx.parts).map((l) => l.seq);
}

/** The sequence nearest the middle of a log after which no session is open. */
function splitSeq(log: readonly LoggedTransaction[]): number {
  const middle = log.length / 2;
  return closedSeqs(log).reduce((best, seq) => (Math.abs(seq - middle) < Math.abs(best - middle) ? seq : best));
}

/** Audits on one thread and split at the snapshot, and expects the same report, the worker's range taken. */
async function bothWays({ bus, connection, snapshotSeq }: Loaded): Promise<AuditReport> {
  const single = await auditLog(bus, { parallel: false });
  const parallel = await auditLog(bus, { parallel: true, connection });
  expect(lastSplit).toMatchObject({ seq: snapshotSeq, taken: true });
  expect(comparable(parallel)).toEqual(comparable(single));
  expect(parallel.snapshots.checked).toBe(1);
  return parallel;
}

describe('a parallel audit over NATS', () => {
  it('runs with a worker when told to, never when told not to, and by default with a kept worker or on a large log', () => {
    expect(useWorker(true, 0)).toBe(true);
    expect(useWorker(false, 10 * PARALLEL_LOG_BYTES)).toBe(false);
    expect(useWorker(undefined, PARALLEL_LOG_BYTES)).toBe(true);
  });

  it('splits at the stored snapshot nearest the middle of the range, with a transaction on each side', () => {
    expect(splitPoint([10, 40, 70], 1, 100)).toBe(40);
    expect(splitPoint([10, 60], 1, 100)).toBe(60);
    expect(splitPoint([100], 1, 100)).toBeNull();
    expect(splitPoint([5], 10, 100)).toBeNull();
    expect(splitPoint([], 1, 100)).toBeNull();
  });

  it('reports a clean log as one thread does', async () => {
    const g = golden('lifecycle');
    const loaded = await load('lifecycle');
    const report = await bothWays(loaded);
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
    expect(report.stateHash).toBe(g.expected.stateHash);
    expect(report.ingest).toEqual({ rederived: g.inputs.length, structural: 0, lost: 0 });
    expect(report.decisionsStream.checked).toBeGreaterThan(0);
    expect(report.sessions).toBe(g.expected.sessions);
    // a worker is now kept: an audit left to choose uses it, and reports the same
    expect(useWorker(undefined, 0)).toBe(true);
    lastSplit.taken = false;
    const chosen = await auditLog(loaded.bus, { connection: loaded.connection });
    expect(lastSplit.taken).toBe(true);
    expect(comparable(chosen)).toEqual(comparable(report));
  }, 120_000);

  it('reports a log with a heartbeat loss and a failover as one thread does', async () => {
    const report = await bothWays(await load('loss-and-failover'));
    expect(report.clean).toBe(true);
    expect(report.ingest.rederived).toBe(golden('loss-and-failover').inputs.length);
  }, 120_000);

  it('audits the later range itself when the snapshot does not hold the replayed state, and reports the same', async () => {
    const loaded = await load('lifecycle', { snapshot: (state) => ({ ...state, lastAt: state.lastAt + 1 }) });
    const single = await auditLog(loaded.bus, { parallel: false });
    expect(single.failures.map((f) => `${f.seq}:${f.check}`)).toEqual([`${loaded.snapshotSeq}:snapshot`]);
    const parallel = await auditLog(loaded.bus, { parallel: true, connection: loaded.connection });
    expect(lastSplit).toMatchObject({ seq: loaded.snapshotSeq, taken: false });
    expect(comparable(parallel)).toEqual(comparable(single));
  }, 120_000);

  it('audits the later range itself when the worker fails, says so, and reports the same otherwise', async () => {
    const loaded = await load('lifecycle');
    const single = await auditLog(loaded.bus, { parallel: false });
    // a worker that cannot connect (nothing listens on port 1)
    const parallel = await auditLog(loaded.bus, { parallel: true, connection: { servers: 'nats://127.0.0.1:1', name: 'unreachable', timeoutMs: 2_000 } });
    expect(lastSplit).toMatchObject({ seq: loaded.snapshotSeq, taken: false });
    expect(parallel.notes).toEqual([...single.notes, expect.stringMatching(new RegExp(`^the audit's worker failed \\(.+\\): the log after ${loaded.snapshotSeq} was audited on the main thread$`))]);
    expect({ ...comparable(parallel), notes: single.notes }).toEqual(comparable(single));
  }, 120_000);

  it('reports gangs restarted with rendezvous ports held across the split as one thread does', async () => {
    const g = golden('restarts');
    // a snapshot after the first ingest that follows a gang's commit (a session's end): its port is held
    const commit = g.log.findIndex((l) => l.tx.events.some((e) => e.type === 'GangCommitted' && e.rendezvous !== undefined));
    const after = g.log.slice(commit).find((l) => l.tx.kind === 'ingest')!;
    const held = foldTransactions(initialState(), g.log.filter((l) => l.seq <= after.seq)).jobs;
    expect(JSON.stringify(held)).toContain('"rendezvous"');
    await bothWays(await load('restarts', { snapshotSeq: after.seq }));
  }, 120_000);

  it('checks a Checkpoint after the split that names a mark before it, as one thread does', async () => {
    const g = golden('marked-checkpoints');
    // a Checkpoint that does not follow its mark at once, and a split between the two
    const late = g.log.find((l) => l.tx.events.some((e) => e.type === 'Checkpoint' && e.seq !== l.seq - 1))!;
    const mark = late.tx.events.find((e) => e.type === 'Checkpoint')!;
    const snapshotSeq = late.seq - 2;
    expect(mark.type === 'Checkpoint' && mark.seq).toBeLessThan(snapshotSeq);
    const clean = await bothWays(await load('marked-checkpoints', { snapshotSeq }));
    expect(clean.checkpoints.failed).toBe(0);
    const forged = await bothWays(await load('marked-checkpoints', {
      snapshotSeq,
      log: (log) => {
        const event = log.find((l) => l.seq === late.seq)!.tx.events.find((e) => e.type === 'Checkpoint')!;
        if (event.type === 'Checkpoint') event.stateHash = '0'.repeat(64);
      },
    }));
    // that Checkpoint fails (the next one too: the state it names holds the forged one)
    expect(forged.failures[0]).toMatchObject({ seq: late.seq, check: 'checkpoint' });
    expect(forged.failures[0]!.message).toContain('hashes to 000000000000');
  }, 120_000);

  it('reports a big session split in two transactions as one thread does', async () => {
    const report = await bothWays(await load('big-session'));
    expect(report.clean).toBe(true);
    expect(report.sessions).toBe(golden('big-session').expected.sessions);
  }, 120_000);

  it('merges what each range finds: an altered input before the split, an altered session and an altered decision message after it, in log order', async () => {
    const g = golden('lifecycle');
    // the first submit (before the split), the last GangCommitted and the last bind (after it)
    const submit = g.inputs.find((i) => i.subject === 'muster.in.submit')!;
    const ingestSeq = g.log.find((l) => l.tx.kind === 'ingest' && l.tx.events.some((e) => 'inputSeq' in e && e.inputSeq === submit.seq))!.seq;
    const committed = g.log.findLast((l) => l.tx.kind === 'session' && l.tx.events.some((e) => e.type === 'GangCommitted'))!;
    const bindId = decisionMessagesOf(g.log).findLast((m) => m.subject.startsWith('muster.bind.'))!;
    // the snapshot: after the last transaction before that session
    const snapshotSeq = closedSeqs(g.log).findLast((seq) => seq < committed.seq)!;
    expect(ingestSeq).toBeLessThanOrEqual(snapshotSeq);
    const loaded = await load('lifecycle', {
      input: (input) => (input.seq === submit.seq ? { ...input, data: input.data.replace(/"tasks":\d+/, '"tasks":99') } : input),
      log: (log) => {
        const tx = log.find((l) => l.seq === committed.seq)!.tx;
        const event = tx.events.find((e) => e.type === 'GangCommitted')!;
        if (event.type === 'GangCommitted') event.at += 1;
      },
      decision: (msgId, payload) => (msgId === bindId.msgId ? { ...(payload as object), session: 999 } : payload),
      snapshotSeq,
    });
    const report = await bothWays(loaded);
    expect(report.clean).toBe(false);
    const checks = report.failures.map((f) => `${f.seq}:${f.check}`);
    expect(checks).toContain(`${ingestSeq}:ingest`);
    expect(checks).toContain(`${committed.seq}:session`);
    expect(report.decisionsStream.mismatched).toBeGreaterThanOrEqual(1);
    expect(report.failures.map((f) => f.seq)).toEqual([...report.failures.map((f) => f.seq)].sort((a, b) => a - b));
    // the first divergence is the earliest of the two ranges'
    expect(report.divergence?.seq).toBe(ingestSeq);
    expect(report.divergences).toBe(2);
  }, 120_000);
});

function decisionMessagesOf(log: readonly LoggedTransaction[]): { msgId: string; subject: string }[] {
  let state: State = initialState();
  const out: { msgId: string; subject: string }[] = [];
  for (const entry of log) {
    state = foldTransactions(state, [entry]);
    const after = state;
    out.push(...decisionMessages(entry.seq, entry.tx, (id) => shardGet(after.jobs, id)));
  }
  return out;
}
