import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditLog, historyLines, inputLines, inputsPathOf } from '@muster/auditor';
import type { LoggedTransaction, SchedulerEvent } from '@muster/core';
import { copyLog, following, golden, offline, rechain } from './histories.ts';
import { runCli } from './runCli.ts';

// Deliberately altered copies of golden histories must fail the audit at the right sequence, and
// say what differs.
const lifecycle = golden('lifecycle');
const failover = golden('loss-and-failover');
const big = golden('big-session');
const marked = golden('marked-checkpoints');
const reserving = golden('reservations');
const queued = golden('queues');
const elastic = golden('elastic');
const dir = mkdtempSync(join(tmpdir(), 'muster-tampered-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Index of the first transaction of `log` with an event of `type` (and the event's index). */
function find(log: readonly LoggedTransaction[], kind: string, type: SchedulerEvent['type']): { at: number; index: number } {
  const at = log.findIndex((l) => l.tx.kind === kind && l.tx.events.some((e) => e.type === type));
  expect(at).toBeGreaterThan(0);
  return { at, index: log[at]!.tx.events.findIndex((e) => e.type === type) };
}

function writeHistory(name: string, log: readonly LoggedTransaction[], inputs = lifecycle.inputs): string {
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, historyLines(log));
  writeFileSync(inputsPathOf(path), inputLines(inputs));
  return path;
}

describe('a tampered history', () => {
  it('that ends before the last sequence known when the audit began is not clean (a read served by a copy behind its stream)', async () => {
    const log = copyLog(lifecycle.log);
    const end = log.at(-1)!.seq;
    const whole = await auditLog({ ...offline(log, lifecycle.inputs), lastSeq: end });
    expect(whole.clean).toBe(true);
    const short = await auditLog({ ...offline(log.slice(0, -3), lifecycle.inputs), lastSeq: end });
    expect(short.clean).toBe(false);
    expect(short.failures[0]).toMatchObject({ seq: end - 2, check: 'structure' });
    expect(short.failures[0]?.message).toMatch(new RegExp(`ended at ${end - 3}, but MUSTER_LOG's last sequence was ${end}`));
  });

  it('with a preemption victim spared, or its preemptor named wrongly, fails at that session (contract v1.1, DESIGN.md §12)', async () => {
    const log = copyLog(queued.log);
    const at = log.findIndex((l) => l.tx.events.some((e) => e.type === 'GangAborted' && e.reason.category === 'preempted'));
    expect(at).toBeGreaterThan(0);
    const index = log[at]!.tx.events.findIndex((e) => e.type === 'GangAborted' && e.reason.category === 'preempted');
    const victim = log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'GangAborted' }>;
    victim.reason.by = 'someone-else';
    const report = await auditLog(offline(rechain(log), queued.inputs));
    expect(report.clean).toBe(false);
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, index, kind: 'session' });

    // a victim dropped from the transaction: its release, abort and requeue gone
    const spared = copyLog(queued.log);
    const events = spared[at]!.tx.events;
    const jobId = (events[index] as { jobId: string }).jobId;
    spared[at]!.tx.events = events.filter((e) => !('jobId' in e) || e.jobId !== jobId);
    const report2 = await auditLog(offline(rechain(spared), queued.inputs));
    expect(report2.clean).toBe(false);
    expect(report2.divergence).toMatchObject({ seq: spared[at]!.seq, kind: 'session' });
  });

  it('with an elastic gang grown larger, or a shrink turned into a stop of fewer members, fails at that session (contract v1.1, DESIGN.md §13)', async () => {
    const log = copyLog(elastic.log);
    const at = log.findIndex((l) => l.tx.events.some((e) => e.type === 'GangResized' && e.by === undefined));
    expect(at).toBeGreaterThan(0);
    const index = log[at]!.tx.events.findIndex((e) => e.type === 'GangResized');
    (log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'GangResized' }>).members += 1;
    const report = await auditLog(offline(rechain(log), elastic.inputs));
    expect(report.clean).toBe(false);
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, index, kind: 'session', path: 'members' });

    // the shrink for a preemptor: one member fewer given up (its release dropped, the size kept)
    const kept = copyLog(elastic.log);
    const s = kept.findIndex((l) => l.tx.events.some((e) => e.type === 'GangResized' && e.by !== undefined));
    expect(s).toBeGreaterThan(0);
    const events = kept[s]!.tx.events;
    const release = events.findIndex((e) => e.type === 'AllocationReleased' && e.cause === 'preempted');
    const released = events[release] as Extract<SchedulerEvent, { type: 'AllocationReleased' }>;
    released.members = released.members.slice(1);
    const report2 = await auditLog(offline(rechain(kept), elastic.inputs));
    expect(report2.clean).toBe(false);
    expect(report2.divergence).toMatchObject({ seq: kept[s]!.seq, kind: 'session' });
  });

  it('with a reservation moved, or a backfill refusal turned into a commit, fails at that session (contract v1.1)', async () => {
    const log = copyLog(reserving.log);
    const { at, index } = find(log, 'session', 'GangReserved');
    const reserved = log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'GangReserved' }>;
    reserved.startAt -= 1000;
    const report = await auditLog(offline(rechain(log), reserving.inputs));
    expect(report.clean).toBe(false);
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, index, kind: 'session', path: 'startAt' });

    const refused = copyLog(reserving.log);
    const r = refused.findIndex((l) => l.tx.events.some((e) => e.type === 'GangAborted' && e.reason.category === 'reserved'));
    expect(r).toBeGreaterThan(0);
    const events = refused[r]!.tx.events;
    const i = events.findIndex((e) => e.type === 'GangAborted' && e.reason.category === 'reserved');
    (events[i] as Extract<SchedulerEvent, { type: 'GangAborted' }>).reason.category = 'insufficient-resources';
    const second = await auditLog(offline(rechain(refused), reserving.inputs));
    expect(second.clean).toBe(false);
    expect(second.divergence).toMatchObject({ seq: refused[r]!.seq, index: i, kind: 'session', path: 'reason.category' });
  }, 60_000);

  it('with one decision changed fails at its sequence, with both versions and the field', async () => {
    const log = copyLog(lifecycle.log);
    const { at, index } = find(log, 'session', 'GangCommitted');
    const committed = log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'GangCommitted' }>;
    const original = committed.allocations[0]!.node;
    committed.allocations[0]!.node = original === 'c1' ? 'c2' : 'c1';
    const seq = log[at]!.seq;
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.clean).toBe(false);
    expect(report.divergence).toMatchObject({ seq, index, kind: 'session', path: 'allocations.0.node' });
    expect((report.divergence!.expected as typeof committed).allocations[0]!.node).toBe(original);
    expect((report.divergence!.actual as typeof committed).allocations[0]!.node).not.toBe(original);
    expect(report.failures[0]!.seq).toBe(seq);
    // the altered transaction no longer hashes to what its successor recorded
    expect(report.chain).toMatchObject({ ok: false, brokenAt: seq + 1 });

    const cli = await runCli(['audit', '--file', writeHistory('decision-changed', log)]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(new RegExp(`^muster: audit failed .*first bad sequence ${seq} \\(session\\)`));
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stdout).toContain(`first divergence at sequence ${seq}, event ${index}, field allocations.0.node`);
    expect(cli.stdout).toContain(`"node":"${original}"`);
  }, 180_000);

  it('with one ingested event changed fails at its sequence against the input it came from', async () => {
    const log = copyLog(lifecycle.log);
    const { at, index } = find(log, 'ingest', 'JobSubmitted');
    (log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'JobSubmitted' }>).job.priority = 9;
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, index, kind: 'ingest', path: 'job.priority' });
    expect(report.failures[0]).toMatchObject({ seq: log[at]!.seq, check: 'ingest' });
  });

  it('read against a MUSTER_IN that holds another job where the log ingested one says the input changed, not the re-derivation', async () => {
    const log = copyLog(lifecycle.log);
    const { at, index } = find(log, 'ingest', 'JobSubmitted');
    const logged = log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'JobSubmitted' }>;
    // the stream's copy of that input written over by another submission (as a diverged copy would)
    const inputs = lifecycle.inputs.map((input) => (input.seq === logged.inputSeq ? { ...input, data: input.data.replace(`"${logged.job.id}"`, '"someone-else"') } : input));
    expect(inputs).not.toEqual(lifecycle.inputs);
    const report = await auditLog(offline(log, inputs));
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, index, kind: 'ingest' });
    expect(report.failures[0]!.message).toBe(
      `event ${index} of ingest transaction at ${log[at]!.seq} ingested job ${logged.job.id} as input ${logged.inputSeq}, where MUSTER_IN now holds job someone-else: ` +
        "MUSTER_IN no longer holds what the leader read there (the stream lost or wrote over a stored message), so this and later ingests are not re-derived from the leader's inputs",
    );
  });

  it("with a heartbeat loss's consequence changed fails at its sequence", async () => {
    const log = copyLog(failover.log);
    const { at } = find(log, 'fact', 'NodeLost');
    const events = log[at]!.tx.events;
    const pended = events.findIndex((e) => e.type === 'JobPended');
    (events[pended] as Extract<SchedulerEvent, { type: 'JobPended' }>).at -= 1;
    const report = await auditLog(offline(log, failover.inputs));
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, index: pended, kind: 'fact', path: 'at' });
  });

  it('with one transaction removed fails at the missing sequence', async () => {
    const log = copyLog(lifecycle.log);
    const { at } = find(log, 'session', 'GangCommitted');
    const seq = log[at]!.seq;
    log.splice(at, 1);
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.clean).toBe(false);
    expect(report.chain).toMatchObject({ ok: false, brokenAt: seq });
    expect(report.chain.message).toMatch(`transaction ${seq} is missing`);
    expect(report.failures[0]).toMatchObject({ seq, check: 'chain' });

    const cli = await runCli(['audit', '--file', writeHistory('removed', log), '--json']);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({ clean: false, chain: { ok: false, brokenAt: seq } });
  }, 180_000);

  it('with one transaction removed and the rest renumbered fails at that sequence', async () => {
    const log = copyLog(lifecycle.log);
    const { at } = find(log, 'session', 'GangCommitted');
    const seq = log[at]!.seq;
    log.splice(at, 1);
    for (let i = at; i < log.length; i++) log[i]!.seq--;
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.chain).toMatchObject({ ok: false, brokenAt: seq });
    expect(report.failures[0]!.seq).toBe(seq);
  });

  it('re-chained by a forger keeps its hash chain but not its decisions', async () => {
    const log = copyLog(lifecycle.log);
    const { at, index } = find(log, 'session', 'GangCommitted');
    (log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'GangCommitted' }>).session += 1;
    rechain(log, at + 1);
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.chain).toEqual({ ok: true });
    expect(report.clean).toBe(false);
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, index, path: 'session' });
  });

  it('with a checkpoint that does not match the replayed state fails at that checkpoint', async () => {
    const log = copyLog(lifecycle.log);
    const { at } = find(log, 'checkpoint', 'Checkpoint');
    (log[at]!.tx.events[0] as Extract<SchedulerEvent, { type: 'Checkpoint' }>).stateHash = '0'.repeat(64);
    rechain(log, at + 1);
    const report = await auditLog(offline(log, lifecycle.inputs));
    // the lie is folded into the state (lastCheckpoint), so the checkpoints after it fail too
    expect(report.checkpoints.failed).toBeGreaterThanOrEqual(1);
    expect(report.failures[0]).toMatchObject({ seq: log[at]!.seq, check: 'checkpoint' });
    expect(report.failures.every((f) => f.check === 'checkpoint')).toBe(true);
  });

  it('committing a gang twice breaks the invariants', async () => {
    const log = copyLog(lifecycle.log);
    const { at, index } = find(log, 'session', 'GangCommitted');
    const events = log[at]!.tx.events;
    events.splice(index + 1, 0, structuredClone(events[index]!));
    rechain(log, at + 1);
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.invariants.violations).toContainEqual(expect.objectContaining({ seq: log[at]!.seq, rule: 'committed-twice' }));
  });

  it('debiting more than a host has breaks the no-overcommit invariant', async () => {
    const log = copyLog(lifecycle.log);
    const { at, index } = find(log, 'session', 'HostDebited');
    (log[at]!.tx.events[index] as Extract<SchedulerEvent, { type: 'HostDebited' }>).resources.cpu += 1_000_000;
    rechain(log, at + 1);
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.invariants.violations).toContainEqual(expect.objectContaining({ seq: log[at]!.seq, rule: 'overcommit' }));
    expect(report.divergence?.seq).toBe(log[at]!.seq);
  });

  it('ingesting an input twice, or skipping one, breaks exactly-once ingest', async () => {
    const twice = copyLog(lifecycle.log);
    const { at } = find(twice, 'ingest', 'TaskCompleted');
    twice.splice(at + 1, 0, structuredClone(twice[at]!));
    for (let i = at + 1; i < twice.length; i++) twice[i]!.seq = i + 1;
    rechain(twice, at + 1);
    const again = await auditLog(offline(twice, lifecycle.inputs));
    expect(again.failures[0]).toMatchObject({ seq: at + 2, check: 'exactly-once' });

    const skipped = copyLog(lifecycle.log);
    const lost = skipped[at]!.tx.events.filter((e) => 'inputSeq' in e).length;
    skipped.splice(at, 1);
    for (let i = at; i < skipped.length; i++) skipped[i]!.seq = i + 1;
    rechain(skipped, at);
    const report = await auditLog(offline(skipped, lifecycle.inputs));
    expect(report.ingest.lost).toBe(lost);
    expect(report.failures.some((f) => f.check === 'exactly-once' && /never ingested/.test(f.message))).toBe(true);
  });

  it("written by another leader than the term's, or stamped before the last stamp, fails fencing and time", async () => {
    const log = copyLog(lifecycle.log);
    const { at } = find(log, 'checkpoint', 'Checkpoint');
    log[at]!.tx.leader = 'intruder';
    log[at]!.tx.at = 0;
    rechain(log, at + 1);
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.failures.map((f) => [f.seq, f.check])).toEqual(expect.arrayContaining([[log[at]!.seq, 'fencing'], [log[at]!.seq, 'time']]));
  });
});

describe('a tampered history with checkpoint marks', () => {
  const checkpointOf = (l: LoggedTransaction) => l.tx.events.find((e): e is Extract<SchedulerEvent, { type: 'Checkpoint' }> => e.type === 'Checkpoint');
  // the first Checkpoint appended turns after the mark it names
  const lagged = marked.log.findIndex((l) => (checkpointOf(l)?.seq ?? l.seq) < l.seq - 1);

  it('is clean as recorded, its late Checkpoint included', async () => {
    expect(lagged).toBeGreaterThan(0);
    const report = await auditLog(offline(marked.log, marked.inputs));
    expect(report.failures).toEqual([]);
    expect(report.checkpoints.checked).toBe(marked.log.filter((l) => checkpointOf(l) !== undefined).length);
  });

  it('with a Checkpoint that does not match its marked state fails at that checkpoint', async () => {
    const log = copyLog(marked.log);
    checkpointOf(log[lagged]!)!.stateHash = '0'.repeat(64);
    rechain(log, lagged + 1);
    const report = await auditLog(offline(log, marked.inputs));
    expect(report.failures[0]).toMatchObject({ seq: log[lagged]!.seq, check: 'checkpoint' });
    expect(report.failures[0]!.message).toMatch(/hashes to 000000/);
  });

  it('with a Checkpoint naming a state no mark kept fails at that checkpoint', async () => {
    const log = copyLog(marked.log);
    const checkpoint = checkpointOf(log[lagged]!)!;
    checkpoint.seq -= 1;
    rechain(log, lagged + 1);
    const report = await auditLog(offline(log, marked.inputs));
    expect(report.failures[0]).toMatchObject({ seq: log[lagged]!.seq, check: 'checkpoint' });
    expect(report.failures[0]!.message).toMatch(new RegExp(`for the state after ${checkpoint.seq}, .* the open checkpoint mark is at ${checkpoint.seq + 1}`));
  });
});

describe('a session cut short', () => {
  const part1 = big.log.findIndex((l) => l.tx.kind === 'session' && l.tx.parts > 1 && l.tx.part === 1);

  it('by the end of the log is not an error', async () => {
    expect(part1).toBeGreaterThan(0);
    const report = await auditLog(offline(big.log.slice(0, part1 + 1), big.inputs));
    expect(report.failures).toEqual([]);
    expect(report.sessionsCutShort).toBe(1);
  });

  it("by a leader's death, then a new leader's LeaderElected, is not an error", async () => {
    const log = copyLog(big.log.slice(0, part1 + 1));
    const last = log.at(-1)!;
    const term = last.tx.term + 1;
    log.push(following(last, { kind: 'election', term, leader: 's9', at: last.tx.at, session: last.tx.session }, [{ type: 'LeaderElected', term, leader: 's9' }]));
    const report = await auditLog(offline(log, big.inputs));
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
    expect(report.sessionsCutShort).toBe(1);
  });

  it('followed by anything but its next part or an election fails', async () => {
    const log = copyLog(big.log);
    const next = log.findIndex((l, i) => i > part1 + 1 && l.tx.kind === 'ingest');
    const moved = log.splice(next, 1)[0]!;
    log.splice(part1 + 1, log.length, moved);
    moved.seq = log[part1]!.seq + 1;
    rechain(log, part1 + 1);
    const report = await auditLog(offline(log));
    expect(report.failures[0]).toMatchObject({ seq: moved.seq, check: 'session' });
  });
});
