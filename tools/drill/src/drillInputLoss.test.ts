import { describe, expect, it } from 'vitest';
import type { InputMessage } from '@muster/bus';
import type { LoggedTransaction, SchedulerEvent } from '@muster/core';
import { checkInputLoss } from './drillInputLoss.ts';

const submitInput = (seq: number, id: string): InputMessage => {
  const data = JSON.stringify({ id });
  return { seq, subject: 'muster.in.submit', data, size: data.length };
};
const submitted = (id: string, inputSeq: number): SchedulerEvent => ({ type: 'JobSubmitted', v: 1, inputSeq, fingerprint: 'f', job: { id } as never });
const ingestLog = (...events: SchedulerEvent[]): LoggedTransaction[] => [
  { seq: 1, tx: { v: 1, kind: 'ingest', term: 1, leader: 's1', at: 1, prev: null, session: 0, part: 1, parts: 1, events } },
];

describe('drill: MUSTER_IN against its acknowledgements', () => {
  it('finds nothing when every submission is on MUSTER_IN and in the log where it was acknowledged, or not ingested yet', () => {
    const inputs = [submitInput(1, 'j1'), submitInput(2, 'j2'), submitInput(3, 'j3')];
    const loss = checkInputLoss([{ id: 'j1', inputSeq: 1 }, { id: 'j2', inputSeq: 2 }, { id: 'j3', inputSeq: 3 }, { id: 'j4' }], inputs, ingestLog(submitted('j1', 1), submitted('j2', 2)));
    expect(loss).toEqual({ examples: [], count: 0, fromSeq: 0 });
  });

  it('finds an acknowledged message written over: the stream holds another job at its sequence, from which the audit reads other inputs', () => {
    // a copy that lost j2 (acknowledged at 2) and stored j3 there: the leader had ingested j2 as input 2
    const inputs = [submitInput(1, 'j1'), submitInput(2, 'j3')];
    const loss = checkInputLoss([{ id: 'j1', inputSeq: 1 }, { id: 'j2', inputSeq: 2 }, { id: 'j3', inputSeq: 3 }], inputs, ingestLog(submitted('j1', 1), submitted('j2', 2), submitted('j3', 2)));
    expect(loss.fromSeq).toBe(2);
    expect(loss.examples).toEqual([
      'j2: acknowledged at MUSTER_IN 2, where MUSTER_IN now holds job j3',
      'j3: acknowledged at MUSTER_IN 3, ingested by the log as input 2',
      'j3: acknowledged at MUSTER_IN 3, where MUSTER_IN now holds nothing',
    ]);
    expect(loss.count).toBe(3);
  });

  it('finds a submission the log ingested under another sequence than it was acknowledged at, though the stream holds it there', () => {
    const inputs = [submitInput(5, 'j1'), submitInput(6, 'j2')];
    const loss = checkInputLoss([{ id: 'j1', inputSeq: 5 }, { id: 'j2', inputSeq: 6 }], inputs, ingestLog(submitted('j1', 6)));
    expect(loss.examples).toEqual(['j1: acknowledged at MUSTER_IN 5, ingested by the log as input 6']);
  });

  it('names what else MUSTER_IN holds at an acknowledged sequence', () => {
    const data = '{"jobId":"j9","member":0,"ok":true}';
    const loss = checkInputLoss([{ id: 'j1', inputSeq: 4 }], [{ seq: 4, subject: 'muster.in.node.sim-1.done', data, size: data.length }], []);
    expect(loss.examples).toEqual(['j1: acknowledged at MUSTER_IN 4, where MUSTER_IN now holds a message on muster.in.node.sim-1.done']);
  });
});
