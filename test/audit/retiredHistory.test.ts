import { describe, expect, it } from 'vitest';
import { auditLog } from '@muster/auditor';
import { foldTransactions, initialState, retirement, shardEntriesSorted } from '@muster/core';
import type { LoggedTransaction, State } from '@muster/core';
import { following, golden, offline } from './histories.ts';

// JobsRetired is the leader's to time, but the audit holds each retired job to the rules: finished
// long enough before the stamp, holding nothing.
const lifecycle = golden('lifecycle');

function stateOf(log: readonly LoggedTransaction[]): State {
  return foldTransactions(initialState(), log);
}

function retiring(log: readonly LoggedTransaction[], jobIds: string[], retainMs: number): LoggedTransaction[] {
  const last = log[log.length - 1]!;
  const at = last.tx.at + 1;
  const stamp = { kind: 'fact' as const, term: last.tx.term, leader: last.tx.leader, at, session: last.tx.session };
  return [...log, following(last, stamp, [{ type: 'JobsRetired', at, retainMs, jobIds }])];
}

describe('auditing retirements', () => {
  it('passes a retirement of finished jobs', async () => {
    const state = stateOf(lifecycle.log);
    const at = lifecycle.log[lifecycle.log.length - 1]!.tx.at + 1;
    const due = retirement(state, at, 0, 100);
    expect(due?.jobIds.length).toBeGreaterThan(0);
    const report = await auditLog(offline(retiring(lifecycle.log, due!.jobIds, 0), lifecycle.inputs));
    expect(report.failures).toEqual([]);
    expect(report.clean).toBe(true);
  });

  it('fails a retirement of a job that is still running, at its sequence, naming the job', async () => {
    // the log up to its first commit: that gang is running
    const upTo = lifecycle.log.findIndex((l) => l.tx.events.some((e) => e.type === 'GangCommitted'));
    const prefix = lifecycle.log.slice(0, upTo + 1);
    const running = shardEntriesSorted(stateOf(prefix).jobs).find(([, j]) => j.status === 'running');
    expect(running).toBeDefined();
    const log = retiring(prefix, [running![0]], 0);
    const report = await auditLog(offline(log, lifecycle.inputs));
    expect(report.clean).toBe(false);
    expect(report.failures[0]).toMatchObject({ seq: log[log.length - 1]!.seq, check: 'fact' });
    expect(report.failures[0]!.message).toContain(`job ${running![0]} is ${running![1].status}, not finished`);
  });

  it('fails a retirement before the retention it names has passed', async () => {
    const state = stateOf(lifecycle.log);
    const finished = shardEntriesSorted(state.jobs).find(([, j]) => j.finishedAt !== null);
    expect(finished).toBeDefined();
    const report = await auditLog(offline(retiring(lifecycle.log, [finished![0]], 1e12), lifecycle.inputs));
    expect(report.clean).toBe(false);
    expect(report.failures[0]!.message).toMatch(/less than 1000000000000 ms before/);
  });
});
