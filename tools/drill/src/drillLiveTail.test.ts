import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { InputMessage, StoredDecision } from '@muster/bus';
import type { LoggedTransaction } from '@muster/core';
import { checkDecisions, lostJobs } from './drillDecisions.ts';
import type { FaultRecord } from './drillFaultRecord.ts';
import { checkLiveness } from './drillLiveness.ts';
import { replayLog } from './drillReplay.ts';
import { takeovers } from './drillTakeover.ts';

// A live tail recorded by test/drill/recordLiveTail.ts: a 12 s drill of 25 gangs/s on three nodes
// (saturated: the leader was still deciding while the drill read), with a leader kill. `race` is
// the log read first and the stream once the leader had logged more, as the drill read them before
// (issue 16), and the log read again after that stream.
interface LiveTail {
  faults: FaultRecord[];
  accepted: string[];
  inputs: InputMessage[];
  stream: StoredDecision[];
  log: LoggedTransaction[];
  race: { log: LoggedTransaction[]; stream: StoredDecision[]; logAfter: LoggedTransaction[] };
}
const tail = JSON.parse(gunzipSync(readFileSync(new URL('../fixtures/liveTail.json.gz', import.meta.url))).toString('utf8')) as LiveTail;
const lastSeq = (log: readonly LoggedTransaction[]): number => log[log.length - 1]?.seq ?? 0;

describe('drill checks on a recorded live tail', () => {
  it('reads in order (inputs, decisions, then the log) find nothing lost, duplicated or contradicted, and a backlog', () => {
    const f = checkDecisions(tail.accepted, tail);
    expect(f.lost).toEqual([]);
    expect(f.duplicated).toEqual([]);
    expect(f.contradicted).toEqual([]);
    expect(f.backlog.pending.length).toBeGreaterThan(0);
    expect(f.neverCommitted.length).toBeLessThanOrEqual(f.backlog.pending.length + f.backlog.notIngested.length);
    expect(f.decisionsOnStream).toBeGreaterThan(100);
  });

  it('the issue\'s findings were the race: a stream read after the log names transactions past it, and the same stream against a log read after it is clean', () => {
    const { log, stream } = tail.race;
    // the leader went on deciding between the two reads
    const published = Math.max(...stream.map((m) => m.logSeq ?? 0));
    expect(published).toBeGreaterThan(lastSeq(log));
    const raced = checkDecisions(tail.accepted, { inputs: tail.inputs, stream, log });
    expect(raced.contradicted.some((c) => c.includes('past the end'))).toBe(true);
    expect(raced.contradicted.every((c) => c.includes('past the end'))).toBe(true);
    // the same stream against the log read after it: every message has its transaction, nothing is lost
    const exact = checkDecisions(tail.accepted, { inputs: tail.inputs, stream, log: tail.race.logAfter });
    expect(lastSeq(tail.race.logAfter)).toBeGreaterThanOrEqual(published);
    expect(exact.contradicted).toEqual([]);
    expect(exact.duplicated).toEqual([]);
    expect(exact.lost).toEqual([]);
  });

  it('finds what is tampered with: a decision dropped from the stream, one published twice, a body changed, a submission skipped at ingest', () => {
    const decisions = tail.stream.filter((m) => m.subject.startsWith('muster.decision.'));
    const victim = decisions[10] as StoredDecision;
    const dropped = checkDecisions(tail.accepted, { ...tail, stream: tail.stream.filter((m) => m !== victim) });
    expect(dropped.lost.some((l) => l.includes(`decision ${victim.msgId} not on MUSTER_DECISIONS`))).toBe(true);
    const twice = checkDecisions(tail.accepted, { ...tail, stream: [...tail.stream, { ...victim, seq: 1e9 }] });
    expect(twice.duplicated.some((d) => d.startsWith(`${victim.msgId}: stored twice`))).toBe(true);
    const changed = checkDecisions(tail.accepted, { ...tail, stream: tail.stream.map((m) => (m === victim ? { ...m, data: m.data.replace('"session":', '"session":1') } : m)) });
    expect(changed.contradicted.some((c) => c.includes(`(${victim.msgId})`))).toBe(true);
    const jobId = tail.accepted[0] as string;
    const skipped = tail.log.map((l) => ({ ...l, tx: { ...l.tx, events: l.tx.events.filter((e) => !(e.type === 'JobSubmitted' && e.job.id === jobId)) } }));
    expect(lostJobs(checkDecisions(tail.accepted, { ...tail, log: skipped }))).toContain(jobId);
  });

  it('replay finds no overcommit, and the takeover after the recorded leader kill is measured from the log', () => {
    expect(replayLog(tail.log, new Set()).overcommits).toEqual([]);
    const t = takeovers(tail.faults, tail.log);
    expect(t).toHaveLength(1);
    expect(t[0]?.decisionMs).toBeGreaterThan(0);
    expect(t[0]?.decisionMs).toBeLessThan(5_000);
  });

  it('liveness: no wait with work that fits on the live tail, and a stall cut into it is found', () => {
    const from = tail.log[0]?.tx.at ?? 0;
    const to = tail.log[tail.log.length - 1]?.tx.at ?? 0;
    expect(checkLiveness(tail.log, tail.inputs, { from, to }, 10_000).violations).toEqual([]);
    // a stall: the log as if the leader had stopped halfway, with every later input stored and a gap of 20 s
    const half = tail.log.filter((l) => l.tx.at <= from + (to - from) / 2);
    const r = checkLiveness(half, tail.inputs, { from, to: to + 20_000 }, 10_000);
    expect(r.violations.length).toBeGreaterThan(0);
    expect(r.violations[0]?.fitting.length).toBeGreaterThan(0);
  });
});
