import { describe, expect, it } from 'vitest';
import type { PublishedDecision } from '@muster/bus';
import { makeTransaction } from '@muster/core';
import type { SchedulerEvent, Transaction } from '@muster/core';
import { firstOwed, judgedRange } from './firstOwed.ts';
import { derivedMessages } from './publishedEvidence.ts';

// a transaction whose decisions are one Stop per node named (a cancelled gang's allocations)
const stops = (...nodes: string[]): Transaction =>
  makeTransaction(null, { kind: 'fact', term: 1, leader: 's1', at: 0, session: 0 }, nodes.map((node): SchedulerEvent => ({
    type: 'AllocationReleased', jobId: 'j', node, role: 'main', members: [0], resources: { cpu: 1, memoryMb: 1, slots: 1, gpus: 0 }, gpuIds: [], cause: 'cancelled',
  })));

// the log: sequences 10..14, each with the Stops of three nodes (13 has none: a transaction without decisions)
const log = new Map<number, Transaction>([
  [10, stops('a', 'b', 'c')],
  [11, stops('a', 'b', 'c')],
  [12, stops('a', 'b', 'c')],
  [13, stops()],
  [14, stops('a', 'b', 'c')],
]);

/** The messages of the log's sequences `seqs` as MUSTER_DECISIONS holds them, from stream sequence `firstStreamSeq`, minus the msg ids `holes`. */
function published(seqs: number[], firstStreamSeq: number, holes: string[] = []): PublishedDecision[] {
  const msgs = seqs.flatMap((seq) => derivedMessages(seq, log.get(seq)!)).filter((m) => !holes.includes(m.msgId));
  return msgs.map((m, i) => ({ streamSeq: firstStreamSeq + i, logSeq: m.logSeq, msgId: m.msgId, subject: m.subject, data: JSON.stringify(m.payload) }));
}

describe('firstOwed: where a successor resumes publishing', () => {
  it('after the last decision published when the tail has no hole', () => {
    expect(firstOwed(published([10, 11, 12, 14], 1), log)).toBe(15);
  });

  it('at the first transaction with a message missing, though later ones were published (a half-failed pipelined call)', () => {
    expect(firstOwed(published([10, 11, 12, 14], 1, ['muster:11:1:b']), log)).toBe(11);
    // every message of 12 lost, those of 14 stored
    expect(firstOwed(published([10, 11, 12, 14], 1, ['muster:12:0:a', 'muster:12:1:b', 'muster:12:2:c']), log)).toBe(12);
  });

  it('does not count the first message\'s earlier siblings as missing when the stream holds older messages', () => {
    // the tail starts at 10's second message: its first lies before the tail
    const tail = published([10, 11, 12, 14], 50).slice(1);
    expect(judgedRange(tail)).toEqual({ from: 10, to: 14 });
    expect(firstOwed(tail, log)).toBe(15);
    // but a sibling after the first message is judged
    expect(firstOwed(tail.filter((d) => d.msgId !== 'muster:10:2:c'), log)).toBe(10);
  });

  it('judges from the lowest log sequence when the tail is the whole stream (a hole at its very start)', () => {
    const tail = published([10, 11, 12, 14], 1, ['muster:10:0:a']);
    expect(judgedRange(tail)).toEqual({ from: 10, to: 14 });
    expect(firstOwed(tail, log)).toBe(10);
  });

  it('counts a transaction it was not given as owed, and resumes at 1 on an empty stream', () => {
    const partial = new Map([...log].filter(([seq]) => seq !== 12));
    expect(firstOwed(published([10, 11, 12, 14], 1), partial)).toBe(12);
    expect(firstOwed([], log)).toBe(1);
  });
});
