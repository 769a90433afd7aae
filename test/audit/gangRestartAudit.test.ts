import { describe, expect, it } from 'vitest';
import { auditLog } from '@muster/auditor';
import type { GangCommitted, LoggedTransaction, SchedulerEvent } from '@muster/core';
import { Cluster, done, job, node, register, schedule, submit } from '@muster/core/testing';
import { copyLog, golden, offline, rechain } from './histories.ts';

// The auditor on a contract v1.2 log (DESIGN.md §15): it re-derives rendezvous, restarts and
// failures with the same core, and checks that a failure stops its attempt whole, that attempts
// follow one another and that a rendezvous port is held once per node.

function restartingLog(): Cluster {
  const c = new Cluster();
  const gang = (id: string) => ({ ...job(id, { tasks: 2 }), failurePolicy: { maxRestarts: 1, backoffMs: 1000 } });
  for (const step of [register({ ...node('n1'), address: '10.0.0.1' }), register(node('n2')), submit(gang('a')), submit(gang('b')), schedule()]) c.run(step);
  // the node a member is bound to now, from its latest MemberBound
  const member = (id: string, m: number): string =>
    c.log.flat().filter((e): e is Extract<SchedulerEvent, { type: 'MemberBound' }> => e.type === 'MemberBound' && e.jobId === id && e.member === m).at(-1)!.node;
  c.run(done(member('a', 1), 'a', 1, false, { exitCode: 7, attempt: 0 }));
  c.at += 1000;
  c.run(schedule());
  c.run(done(member('a', 0), 'a', 0, false, { exitCode: 7, attempt: 1 }));
  return c;
}

function index(log: readonly LoggedTransaction[], type: SchedulerEvent['type'], keep: (e: SchedulerEvent) => boolean = () => true): { at: number; i: number } {
  const at = log.findIndex((l) => l.tx.events.some((e) => e.type === type && keep(e)));
  expect(at).toBeGreaterThanOrEqual(0);
  return { at, i: log[at]!.tx.events.findIndex((e) => e.type === type && keep(e)) };
}

describe('auditing a log with restarts', () => {
  it('audits clean: every rendezvous, restart and failure re-derived, no invariant broken', async () => {
    const c = restartingLog();
    const events = c.log.flat();
    expect(events.filter((e) => e.type === 'GangRestarting')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'JobFinished' && e.outcome === 'failed')).toHaveLength(1);
    const report = await auditLog(offline(c.transactions, c.inputs));
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
    expect(report.invariants.count).toBe(0);
  });

  it('fails where a member of the failed attempt is left running (its release dropped)', async () => {
    const c = restartingLog();
    const log = copyLog(c.transactions);
    const { at } = index(log, 'GangRestarting');
    log[at]!.tx.events = log[at]!.tx.events.filter((e) => !(e.type === 'AllocationReleased' && e.cause === 'member-failed'));
    const report = await auditLog(offline(rechain(log), c.inputs));
    expect(report.clean).toBe(false);
    expect(report.invariants.violations).toContainEqual(expect.objectContaining({ seq: log[at]!.seq, rule: 'gang-failure' }));
  });

  it('fails where two gangs are given one rendezvous port on a node', async () => {
    const c = restartingLog();
    const log = copyLog(c.transactions);
    const { at, i } = index(log, 'GangCommitted', (e) => (e as GangCommitted).jobId === 'b');
    const commit = log[at]!.tx.events[i] as GangCommitted;
    expect(commit.rendezvous?.port).toBe(29501);
    commit.rendezvous!.port = 29500;
    const report = await auditLog(offline(rechain(log), c.inputs));
    expect(report.clean).toBe(false);
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, kind: 'session' });
    expect(report.invariants.violations).toContainEqual(expect.objectContaining({ seq: log[at]!.seq, rule: 'rendezvous' }));
  });

  it('fails where a restart commits an attempt the job is not on', async () => {
    const c = restartingLog();
    const log = copyLog(c.transactions);
    const { at, i } = index(log, 'GangCommitted', (e) => (e as GangCommitted).attempt === 1);
    (log[at]!.tx.events[i] as GangCommitted).attempt = 2;
    const report = await auditLog(offline(rechain(log), c.inputs));
    expect(report.clean).toBe(false);
    expect(report.invariants.violations).toContainEqual(expect.objectContaining({ seq: log[at]!.seq, rule: 'attempts' }));
  });
});

describe('the restarts golden history (recorded from a real leader)', () => {
  const restarts = golden('restarts');

  it('holds a restart, a failure by policy, a refused late report and a port exhaustion', () => {
    const events = restarts.log.flatMap((l) => l.tx.events);
    expect(events.filter((e) => e.type === 'GangRestarting')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'JobFinished' && e.member !== undefined)).toHaveLength(2);
    expect(events.some((e) => e.type === 'InputRejected' && e.reason.path === 'attempt')).toBe(true);
    expect(events.some((e) => e.type === 'GangAborted' && e.reason.hosts['no-rendezvous-port'] !== undefined)).toBe(true);
    expect(events.filter((e): e is GangCommitted => e.type === 'GangCommitted').map((c) => c.attempt ?? 0)).toContain(1);
  });

  it('fails the audit where a member of the failed attempt is left holding resources', async () => {
    const log = copyLog(restarts.log);
    const { at } = index(log, 'GangRestarting');
    log[at]!.tx.events = log[at]!.tx.events.filter((e) => !(e.type === 'AllocationReleased' && e.cause === 'member-failed'));
    const report = await auditLog(offline(rechain(log), restarts.inputs));
    expect(report.clean).toBe(false);
    expect(report.divergence).toMatchObject({ seq: log[at]!.seq, kind: 'ingest' });
    expect(report.invariants.violations).toContainEqual(expect.objectContaining({ seq: log[at]!.seq, rule: 'gang-failure' }));
  });
});
