import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendTransactions, publishDecisions, publishInput, readLog, saveSnapshot } from '@muster/bus';
import { auditLog } from '@muster/auditor';
import { STATE_SCHEMA, TurnContext, canonicalHash, foldTransactions, initialState, shardGet, stateHash, transactionHash, turn } from '@muster/core';
import type { Explanation, LoggedTransaction, SchedulerEvent } from '@muster/core';
import { comparable } from './comparableReport.ts';
import { runLive } from './recordWorkload.ts';
import type { LiveRun } from './recordWorkload.ts';
import { runCli } from './runCli.ts';
import { lifecycle } from './workloads.ts';

// The log of a live integration run (a real scheduler on a real nats-server), audited over NATS:
// MUSTER_LOG, MUSTER_IN, MUSTER_DECISIONS and the snapshot store.
// each `muster` run starts a fresh node with tsx: slow on a loaded machine
const CLI_TESTS_MS = 180_000;

describe('muster audit on the log of a live run', () => {
  let run: LiveRun;
  beforeAll(async () => {
    run = await runLive(lifecycle);
  }, 180_000);
  afterAll(async () => {
    await run?.stop();
  });

  it('audits clean over NATS: every decision re-derived and found on MUSTER_DECISIONS, snapshots and checkpoints verified', async () => {
    const progress: number[] = [];
    const report = await auditLog(run.bus, { onProgress: (p) => progress.push(p.seq) });
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
    expect(report.lastSeq).toBe(run.log.at(-1)!.seq);
    expect(report.stateHash).toBe(run.leaderStateHash);
    expect(report.ingest).toEqual({ rederived: run.inputs.length, structural: 0, lost: 0 });
    expect(report.decisionsStream).toMatchObject({ available: true, missing: 0, mismatched: 0, unexpected: 0, duplicated: 0, inFlight: 0 });
    expect(report.decisionsStream.checked).toBeGreaterThan(report.decisionsRederived);
    expect(report.snapshots.checked).toBeGreaterThan(0);
    expect(report.checkpoints.checked).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(report.lastSeq);
    // split at a stored snapshot (a worker auditing the log after it), the report is the same
    expect(comparable(await auditLog(run.bus, { parallel: true, connection: { servers: run.server.url, name: 'live-audit-test' } }))).toEqual(comparable(report));
  });

  it('`muster audit --nats URL` exits 0 with a summary, and --json with the report', async () => {
    const text = await runCli(['audit', '--nats', run.server.url]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^audit of sequences 1\.\.\d+: CLEAN/);
    expect(text.stdout).toMatch(/MUSTER_DECISIONS\s+\d+ messages equal/);
    const json = await runCli(['audit', '--nats', run.server.url, '--json', '--from', '10', '--to', '40']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ clean: true, fromSeq: 10, lastSeq: 40, transactions: 31 });
  }, CLI_TESTS_MS);

  it('travels in time: --at SEQ --state is the state as of SEQ, --job tells one job\'s story', async () => {
    const commit = run.log.find((l) => l.tx.events.some((e) => e.type === 'GangCommitted' && e.jobId === 'big-j'))!;
    const before = commit.seq - 1;
    const state = await runCli(['audit', '--nats', run.server.url, '--at', String(before), '--state', '--json']);
    expect(state.code).toBe(0);
    const printed = JSON.parse(state.stdout) as { seq: number; stateHash: string };
    const expected = foldTransactions(initialState(), run.log.slice(0, before));
    expect(printed.seq).toBe(before);
    expect(printed.stateHash).toBe(stateHash(expected));
    expect(shardGet(expected.jobs, 'big-j')?.status).toBe('pending');

    const story = await runCli(['audit', '--nats', run.server.url, '--at', String(commit.seq), '--job', 'big-j', '--json']);
    expect(story.code).toBe(0);
    const told = JSON.parse(story.stdout) as { events: { seq: number; event: SchedulerEvent }[]; job: { status: string } };
    expect(told.job.status).toBe('running');
    expect(told.events[0]!.event.type).toBe('JobSubmitted');
    expect(told.events.at(-1)).toMatchObject({ seq: commit.seq, event: { type: 'GangCommitted', jobId: 'big-j' } });
    expect(told.events.every((e) => e.seq <= commit.seq)).toBe(true);

    const human = await runCli(['audit', '--nats', run.server.url, '--at', String(commit.seq), '--job', 'big-j']);
    expect(human.stdout).toMatch(/^job big-j as of sequence \d+: running/);
    const beyond = await runCli(['audit', '--nats', run.server.url, '--at', String(run.log.length + 100), '--state']);
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(/the log ends at sequence/);
  }, CLI_TESTS_MS);

  it('`muster explain JOB --at SEQ` says why the job was pending then', async () => {
    const aborted = run.log.find((l) => l.tx.events.some((e) => e.type === 'GangAborted' && e.jobId === 'big-j'))!;
    const then = await runCli(['explain', 'big-j', '--at', String(aborted.seq), '--nats', run.server.url, '--json']);
    expect(then.code).toBe(0);
    const e = JSON.parse(then.stdout) as Explanation;
    expect(e).toMatchObject({ jobId: 'big-j', status: 'pending', reason: { category: 'insufficient-resources' } });
    const now = await runCli(['explain', 'big-j', '--at', String(run.log.at(-1)!.seq), '--nats', run.server.url, '--json']);
    expect((JSON.parse(now.stdout) as Explanation).status).toBe('succeeded');
  }, CLI_TESTS_MS);

  it('reports decisions a leader appended but did not publish before dying as in flight, not failed', async () => {
    await run.stopReplicas();
    // the log as the stopped leader left it (it may have written after the run read it: a checkpoint, a due session)
    const log: LoggedTransaction[] = [];
    for await (const entry of readLog(run.bus)) log.push(entry);
    // what a leader does for one input and one session, then it dies before publishing
    const last = log.at(-1)!;
    const state = foldTransactions(initialState(), log);
    const body = JSON.stringify({ id: 'tail-z', identity: { user: 'zed' }, tasks: 2, resources: { cpu: 500, memoryMb: 512 } });
    const input = { seq: (await publishInput(run.bus, 'muster.in.submit', body, 'tail-z')).seq, subject: 'muster.in.submit', data: body };
    const at = Math.max(Date.now(), state.lastAt);
    const result = turn(new TurnContext(), state, transactionHash(last.tx), [{ inputs: [input] }, { session: true }], { term: state.term, leader: state.leader ?? 's1', at });
    expect(result.transactions.map((t) => t.tx.kind)).toEqual(['ingest', 'session']);
    expect((await appendTransactions(run.bus, result.transactions, last.seq)).ok).toBe(true);

    const report = await auditLog(run.bus);
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
    expect(report.lastSeq).toBe(last.seq + 2);
    expect(report.decisionsStream.inFlight).toBeGreaterThan(0);
    expect(report.notes.join(' ')).toMatch(/in flight/);
    const cli = await runCli(['audit', '--nats', run.server.url]);
    expect(cli.code).toBe(0);
  }, CLI_TESTS_MS);

  it('fails on a decision on MUSTER_DECISIONS that the log does not derive', async () => {
    const seq = run.log.at(-1)!.seq;
    const forged = { type: 'GangAborted', jobId: 'pack-a', session: 1, at: 0, final: true, reason: { category: 'cancelled', message: 'forged', hosts: {} } };
    expect((await publishDecisions(run.bus, [{ subject: 'muster.decision.pack-a', payload: forged, msgId: `muster:${seq}:99`, logSeq: seq }])).ok).toBe(true);
    const report = await auditLog(run.bus);
    expect(report.clean).toBe(false);
    expect(report.decisionsStream.unexpected).toBe(1);
    expect(report.failures[0]).toMatchObject({ seq, check: 'decisions-stream' });
    const cli = await runCli(['audit', '--nats', run.server.url]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(`first bad sequence ${seq} (decisions-stream)`);
  }, CLI_TESTS_MS);

  it('exits 3 when NATS is unreachable and 2 on a usage error, with one line', async () => {
    const unreachable = await runCli(['audit', '--nats', 'nats://127.0.0.1:1', '--timeout', '500']);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr.trim().split('\n')).toHaveLength(1);
    const usage = await runCli(['audit', '--state']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--state and --job need --at/);
  }, CLI_TESTS_MS);

  it('fails on a stored snapshot that does not hash to its record, and on one whose record is not the replayed state', async () => {
    const [altered, foreign] = [run.log[3]!.seq, run.log[5]!.seq];
    // two slots beside the scheduler's: its own snapshots stay as they are
    await saveSnapshot(run.bus, { schema: STATE_SCHEMA, seq: altered, hash: canonicalHash({ seq: 0 }), state: { seq: altered } }, { keep: 5 });
    await saveSnapshot(run.bus, { schema: STATE_SCHEMA, seq: foreign, hash: canonicalHash({ seq: foreign }), state: { seq: foreign } }, { keep: 5 });
    const report = await auditLog(run.bus);
    expect(report.clean).toBe(false);
    expect(report.snapshots.failed).toBe(2);
    const failed = report.failures.filter((f) => f.check === 'snapshot');
    expect(failed.map((f) => f.seq)).toEqual([altered, foreign]);
    expect(failed[0]!.message).toMatch(/does not hash to its record/);
    expect(failed[1]!.message).toMatch(`the replayed state at ${foreign} hashes to`);
    // a parallel audit splits at neither (they do not check out) and reports them the same
    expect(comparable(await auditLog(run.bus, { parallel: true, connection: { servers: run.server.url, name: 'live-audit-test' } }))).toEqual(comparable(report));
  });
});
