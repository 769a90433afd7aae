import { afterAll, describe, expect, it } from 'vitest';
import { appendTransactions, connect, ensureStreams, jetStream, publishDecisions, publishInput } from '@muster/bus';
import type { JetStreamClient, NatsConnection } from '@muster/bus';
import { auditLog } from '@muster/auditor';
import type { AuditReport } from '@muster/auditor';
import { decisionMessages, foldTransactions, initialState, shardGet } from '@muster/core';
import type { Input, LoggedTransaction, State } from '@muster/core';
import { startNatsServer } from '@muster/stack';
import type { NatsServerHandle } from '@muster/stack';
import { workerConnection } from '../../services/auditor/src/parallelAudit.ts';
import { copyLog, golden, rechain } from './histories.ts';

// Over NATS the audit re-derives inputs and compares MUSTER_DECISIONS on a worker thread with a
// connection of its own, which folds the same log beside the main thread. Whatever a log holds, the
// report must be the one the audit makes on one thread. Each case writes a golden history onto a
// nats-server of its own (MUSTER_LOG, MUSTER_IN with the same sequences, MUSTER_DECISIONS as a
// leader would publish it), altered or not, and audits it both ways.

interface Loaded {
  server: NatsServerHandle;
  nc: NatsConnection;
  js: JetStreamClient;
}

const started: Loaded[] = [];

afterAll(async () => {
  for (const s of started) {
    await s.nc.close().catch(() => undefined);
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

async function load(name: string, alter: Alterations = {}, auth?: { user: string; pass: string }): Promise<Loaded> {
  const g = golden(name);
  const server = await startNatsServer(auth === undefined ? {} : { extraConfig: `authorization { user: "${auth.user}", password: "${auth.pass}" }` });
  const nc = await connect({ servers: server.url, name: 'parallel-audit-test', ...(auth ?? {}) });
  const loaded = { server, nc, js: jetStream(nc) };
  started.push(loaded);
  await ensureStreams(nc, { replicas: 1 });
  const log = copyLog(g.log);
  if (alter.log !== undefined) {
    alter.log(log);
    rechain(log);
  }
  for (const input of [...g.inputs].sort((a, b) => a.seq - b.seq)) {
    const published = alter.input?.(input) ?? input;
    const ack = await publishInput(loaded.js, published.subject, published.data);
    expect(ack.seq).toBe(input.seq);
  }
  expect((await appendTransactions(loaded.js, log.map((l) => l.tx), 0)).ok).toBe(true);
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
  expect((await publishDecisions(nc, messages)).ok).toBe(true);
  return loaded;
}

/** The report without what depends on timing. */
function comparable(report: AuditReport): Omit<AuditReport, 'ms' | 'timings'> {
  const { ms: _ms, timings: _timings, ...rest } = report;
  return rest;
}

async function bothWays(js: JetStreamClient): Promise<AuditReport> {
  const parallel = await auditLog(js);
  const single = await auditLog(js, { parallel: false });
  expect(comparable(parallel)).toEqual(comparable(single));
  return parallel;
}

async function closedConnectionNames(server: NatsServerHandle): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${server.monitorPort}/connz?state=closed&limit=1000`);
  const body = (await res.json()) as { connections?: { name?: string }[] };
  return (body.connections ?? []).map((c) => c.name ?? '');
}

describe('a parallel audit over NATS', () => {
  it('reports a clean log as one thread does, with a worker connection of its own', async () => {
    const g = golden('lifecycle');
    const { js, server } = await load('lifecycle');
    const report = await bothWays(js);
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
    expect(report.stateHash).toBe(g.expected.stateHash);
    expect(report.ingest).toEqual({ rederived: g.inputs.length, structural: 0, lost: 0 });
    expect(report.decisionsStream.checked).toBeGreaterThan(0);
    expect(report.sessions).toBe(g.expected.sessions);
    // the worker read MUSTER_IN and closed its connection at the end of the audit
    expect(await closedConnectionNames(server)).toContain('muster-audit-worker');
  }, 120_000);

  it('opens the worker\'s connection with the audit\'s own credentials', async () => {
    const { js, server } = await load('loss-and-failover', {}, { user: 'auditor', pass: 's3cret' });
    const connection = workerConnection(js);
    expect(connection).toMatchObject({ user: 'auditor', pass: 's3cret' });
    expect(connection!.servers.join(' ')).toContain(server.url.replace('nats://', ''));
    const report = await bothWays(js);
    expect(report.clean).toBe(true);
    expect(report.ingest.rederived).toBe(golden('loss-and-failover').inputs.length);
    expect(await closedConnectionNames(server)).toContain('muster-audit-worker');
  }, 120_000);

  it('merges what each thread finds: an altered input, an altered session and an altered decision message, in log order', async () => {
    const g = golden('lifecycle');
    // the first submit, the first GangCommitted and the first bind, each altered where only one thread looks
    const submit = g.inputs.find((i) => i.subject === 'muster.in.submit')!;
    const ingestSeq = g.log.find((l) => l.tx.kind === 'ingest' && l.tx.events.some((e) => 'inputSeq' in e && e.inputSeq === submit.seq))!.seq;
    const committed = g.log.find((l) => l.tx.kind === 'session' && l.tx.events.some((e) => e.type === 'GangCommitted'))!;
    const bindId = decisionMessagesOf(g.log).find((m) => m.subject.startsWith('muster.bind.'))!;
    const { js } = await load('lifecycle', {
      input: (input) => (input.seq === submit.seq ? { ...input, data: input.data.replace(/"tasks":\d+/, '"tasks":99') } : input),
      log: (log) => {
        const tx = log.find((l) => l.seq === committed.seq)!.tx;
        const event = tx.events.find((e) => e.type === 'GangCommitted')!;
        if (event.type === 'GangCommitted') event.at += 1;
      },
      decision: (msgId, payload) => (msgId === bindId.msgId ? { ...(payload as object), session: 999 } : payload),
    });
    const report = await bothWays(js);
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
