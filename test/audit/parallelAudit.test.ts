import { afterAll, describe, expect, it } from 'vitest';
import { appendTransactions, connect, ensureStreams, publishDecisions, publishInput } from '@muster/bus';
import type { Bus, ConnectOptions } from '@muster/bus';
import { auditLog } from '@muster/auditor';
import type { AuditReport } from '@muster/auditor';
import { decisionMessages, foldTransactions, initialState, shardGet } from '@muster/core';
import type { Input, LoggedTransaction, State } from '@muster/core';
import { startNatsServer } from '@muster/stack';
import type { NatsServerHandle } from '@muster/stack';
import { PARALLEL_LOG_BYTES } from '@muster/auditor';
import { lastHanded, setMaxQueuedBytes, useWorker } from '@muster/auditor/testing';
import { copyLog, golden, rechain } from './histories.ts';

// Over NATS the audit folds the log a second time on a worker thread, which re-derives sessions
// and inputs handed to it while it keeps up with the main thread. Whatever a log holds, and
// whichever thread re-derives what, the report must be the one the audit makes on one thread. Each case writes a golden history onto a
// nats-server of its own (MUSTER_LOG, MUSTER_IN with the same sequences, MUSTER_DECISIONS as a
// leader would publish it), altered or not, and audits it both ways.

interface Loaded {
  server: NatsServerHandle;
  bus: Bus;
  /** What the bus connected with: the worker connects the same way. */
  connection: ConnectOptions;
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
  return loaded;
}

/** The report without what depends on timing. */
function comparable(report: AuditReport): Omit<AuditReport, 'ms' | 'timings'> {
  const { ms: _ms, timings: _timings, ...rest } = report;
  return rest;
}

/**
 * Audits on one thread and in parallel until the worker was handed sessions and inputs (a cold
 * worker is handed nothing until it keeps up), and expects the same report every time.
 */
async function bothWays({ bus, connection }: Loaded): Promise<AuditReport> {
  const single = await auditLog(bus, { parallel: false });
  const handed = { sessions: 0, ingests: 0 };
  let parallel: AuditReport | null = null;
  for (let i = 0; i < 10 && (handed.sessions === 0 || handed.ingests === 0); i++) {
    parallel = await auditLog(bus, { parallel: true, connection });
    expect(comparable(parallel)).toEqual(comparable(single));
    expect(lastHanded.transactions).toBe(parallel.lastSeq);
    handed.sessions += lastHanded.sessions;
    handed.ingests += lastHanded.ingests;
  }
  expect(handed.sessions).toBeGreaterThan(0);
  expect(handed.ingests).toBeGreaterThan(0);
  return parallel!;
}

describe('a parallel audit over NATS', () => {
  it('runs with a worker when told to, never when told not to, and by default with a kept worker or on a large log', () => {
    expect(useWorker(true, 0)).toBe(true);
    expect(useWorker(false, 10 * PARALLEL_LOG_BYTES)).toBe(false);
    expect(useWorker(undefined, PARALLEL_LOG_BYTES)).toBe(true);
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
    const chosen = await auditLog(loaded.bus, { connection: loaded.connection });
    expect(lastHanded.transactions).toBe(chosen.lastSeq);
    expect(comparable(chosen)).toEqual(comparable(report));
  }, 120_000);

  it('reports a log with a heartbeat loss and a failover as one thread does', async () => {
    const report = await bothWays(await load('loss-and-failover'));
    expect(report.clean).toBe(true);
    expect(report.ingest.rederived).toBe(golden('loss-and-failover').inputs.length);
  }, 120_000);

  it('waits for a worker that falls behind by more than it may hold, and reports the same', async () => {
    const { bus, connection } = await load('lifecycle');
    const single = await auditLog(bus, { parallel: false });
    setMaxQueuedBytes(1);
    try {
      // every transaction now waits until the worker has folded it
      expect(comparable(await auditLog(bus, { parallel: true, connection }))).toEqual(comparable(single));
      expect(lastHanded.sessions + lastHanded.ingests).toBeGreaterThan(0);
    } finally {
      setMaxQueuedBytes();
    }
  }, 120_000);

  it('reports a big session split in two transactions as one thread does', async () => {
    const report = await bothWays(await load('big-session'));
    expect(report.clean).toBe(true);
    expect(report.sessions).toBe(golden('big-session').expected.sessions);
  }, 120_000);

  it('merges what each thread finds: an altered input, an altered session and an altered decision message, in log order', async () => {
    const g = golden('lifecycle');
    // the first submit, the first GangCommitted and the first bind, each altered where only one thread looks
    const submit = g.inputs.find((i) => i.subject === 'muster.in.submit')!;
    const ingestSeq = g.log.find((l) => l.tx.kind === 'ingest' && l.tx.events.some((e) => 'inputSeq' in e && e.inputSeq === submit.seq))!.seq;
    const committed = g.log.find((l) => l.tx.kind === 'session' && l.tx.events.some((e) => e.type === 'GangCommitted'))!;
    const bindId = decisionMessagesOf(g.log).find((m) => m.subject.startsWith('muster.bind.'))!;
    const loaded = await load('lifecycle', {
      input: (input) => (input.seq === submit.seq ? { ...input, data: input.data.replace(/"tasks":\d+/, '"tasks":99') } : input),
      log: (log) => {
        const tx = log.find((l) => l.seq === committed.seq)!.tx;
        const event = tx.events.find((e) => e.type === 'GangCommitted')!;
        if (event.type === 'GangCommitted') event.at += 1;
      },
      decision: (msgId, payload) => (msgId === bindId.msgId ? { ...(payload as object), session: 999 } : payload),
    });
    const report = await bothWays(loaded);
    expect(report.clean).toBe(false);
    const checks = report.failures.map((f) => `${f.seq}:${f.check}`);
    expect(checks).toContain(`${ingestSeq}:ingest`);
    expect(checks).toContain(`${committed.seq}:session`);
    expect(report.decisionsStream.mismatched).toBeGreaterThanOrEqual(1);
    expect(report.failures.map((f) => f.seq)).toEqual([...report.failures.map((f) => f.seq)].sort((a, b) => a - b));
    // the first divergence is the earliest of the two threads'
    expect(report.divergence?.seq).toBe(Math.min(ingestSeq, committed.seq));
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
