// The audit's comparison of MUSTER_DECISIONS with the log, on a live stream: a leader publishes a
// big transaction's messages over several calls, so a read can end midway through it. What comes
// after the last message read, in publishing order (log sequence, event, node), is in flight;
// what comes before it and is not on the stream is missing. A 200 gangs/s drill's audit failed
// 181 times on the rest of a transaction being published while it read (log 1621).
import { describe, expect, it } from 'vitest';
import type { StoredDecision } from '@muster/bus';
import type { OutboundMessage } from '@muster/core';
import { DecisionsCheck } from '@muster/auditor/testing';
import type { Failure } from '@muster/auditor';

const derived = (msgId: string): OutboundMessage => ({ subject: `muster.decision.${msgId}`, payload: { id: msgId }, msgId, logSeq: Number(msgId.split(':')[1]) });
const stored = (m: OutboundMessage, seq: number): StoredDecision => ({ seq, subject: m.subject, msgId: m.msgId, logSeq: m.logSeq, data: JSON.stringify(m.payload) });

// one transaction at 1621: a decision and its bind, then two more decisions
const tx = ['muster:1621:31', 'muster:1621:32', 'muster:1621:32:sim-30', 'muster:1621:35', 'muster:1621:35:sim-224'].map(derived);

describe('the decisions-stream check on a live stream', () => {
  it('counts the rest of a transaction read midway through as in flight, not missing', () => {
    const failures: Failure[] = [];
    const check = new DecisionsCheck(1, (f) => failures.push(f));
    // the stream was read up to the decision 1621:32, before its bind was published
    tx.slice(0, 2).forEach((m, i) => check.fromStream(stored(m, 100 + i)));
    check.fromLog(tx);
    const report = check.finish(1621);
    expect(failures).toEqual([]);
    expect(report).toMatchObject({ checked: 2, missing: 0, inFlight: 3 });
  });

  it('still finds a message missing when one after it in publishing order is on the stream', () => {
    const failures: Failure[] = [];
    const check = new DecisionsCheck(1, (f) => failures.push(f));
    [tx[0]!, tx[1]!, tx[3]!].forEach((m, i) => check.fromStream(stored(m, 100 + i)));
    check.fromLog(tx);
    const report = check.finish(1621);
    expect(report).toMatchObject({ checked: 3, missing: 1, inFlight: 1 });
    expect(failures.map((f) => f.message)).toEqual([expect.stringContaining('muster:1621:32:sim-30 (muster.decision.muster:1621:32:sim-30) follows from the log but is not on MUSTER_DECISIONS')]);
  });
});

describe('the decisions-stream check of a body', () => {
  const encoder = new TextEncoder();
  const m: OutboundMessage = { subject: 'muster.bind.n1', payload: { jobId: 'j1', members: [0, 1], node: 'n1' }, msgId: 'muster:7:2:n1', logSeq: 7 };
  const withBody = (text: string, seq = 1): StoredDecision => ({ seq, subject: m.subject, msgId: m.msgId, logSeq: 7, data: text, bytes: encoder.encode(text) });

  it('takes the same canonical bytes, or the same value written otherwise, as the same body, and reports any other', () => {
    for (const [text, same] of [
      ['{"jobId":"j1","members":[0,1],"node":"n1"}', true],
      ['{ "node": "n1", "members": [0, 1], "jobId": "j1" }', true],
      ['{"jobId":"j1","members":[1,0],"node":"n1"}', false],
    ] as const) {
      const failures: Failure[] = [];
      const check = new DecisionsCheck(1, (f) => failures.push(f));
      check.fromStream(withBody(text));
      check.fromLog([m]);
      expect(check.finish(7), text).toMatchObject({ checked: same ? 1 : 0, mismatched: same ? 0 : 1 });
      expect(failures.length).toBe(same ? 0 : 1);
    }
  });

  it('judges a message stored twice in the range that holds its log sequence, and one without a log sequence in the first range only', () => {
    const failures: Failure[] = [];
    // a parallel audit's two ranges: up to 7, and from 8 on
    const first = new DecisionsCheck(1, (f) => failures.push(f));
    const later = new DecisionsCheck(8, (f) => failures.push(f), false);
    const at9: OutboundMessage = { ...m, msgId: 'muster:9:2:n1', logSeq: 9 };
    const bare: StoredDecision = { seq: 9, subject: 'muster.decision.x', msgId: '', logSeq: null, data: '{}' };
    const body = '{"jobId":"j1","members":[0,1],"node":"n1"}';
    for (const check of [first, later]) {
      check.fromStream(withBody(body, 1));
      check.fromStream(withBody(body, 2));
      check.fromStream({ ...withBody(body, 3), msgId: at9.msgId, logSeq: 9 });
      check.fromStream({ ...withBody(body, 4), msgId: at9.msgId, logSeq: 9 });
      check.fromStream(bare);
    }
    first.fromLog([m]);
    later.fromLog([at9]);
    expect(first.finish(7)).toMatchObject({ checked: 1, duplicated: 1, unexpected: 1 });
    expect(later.finish(20)).toMatchObject({ checked: 1, duplicated: 1, unexpected: 0 });
    expect(failures.map((f) => f.seq).sort()).toEqual([0, 7, 9]);
  });
});
