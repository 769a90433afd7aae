import { describe, expect, it } from 'vitest';
import type { ReplicaStatus } from './drillCluster.ts';
import { checkLogLoss } from './drillLogLoss.ts';

const status = (id: string, seq: number, refusedBecause: string | null = null): ReplicaStatus => ({ id, role: 'standby', seq, term: 4, lastInputSeq: 0, stateHash: 'h', refusedBecause });

describe('checkLogLoss', () => {
  it('finds nothing when every replica is at or before the end of the log read', () => {
    expect(checkLogLoss([status('s1', 38), status('s2', 30)], 38)).toEqual({ logEnd: 38, highest: 0, examples: [], unbackedDecisions: 0 });
  });

  it('names the replicas that folded past the end, and the one that saw it reported (the partition-nats run: the log read ended at 38)', () => {
    const loss = checkLogLoss(
      [
        status('s1', 38, 'MUSTER_LOG went backwards: last sequence 38 (leader n1), seen 137, for 129855 ms'),
        status('s2', 137, 'MUSTER_LOG went backwards: last sequence 38 (leader n1), seen 137, for 30053 ms'),
        status('s3', 137),
      ],
      38,
    );
    expect(loss.highest).toBe(137);
    expect(loss.examples).toEqual(['s1 saw 137 (refuses to lead)', 's2 folded 137', 's3 folded 137']);
  });

  it('a refusal for another reason is not a loss', () => {
    expect(checkLogLoss([status('s1', 10, 'checkpoint at 8 says a but replay gives b')], 10).examples).toEqual([]);
  });

  it('counts refusals and unbacked decisions when the log was written again past what every replica folded (the 15-minute soak: it ended at 25,143)', () => {
    const loss = checkLogLoss(
      [
        status('s1', 19607, 'MUSTER_LOG went backwards: last sequence 18503 (leader n3), seen 19607, for 30038 ms'),
        status('s2', 25143, 'MUSTER_DECISIONS holds muster:19600:3 (stream sequence 9, muster.decision.j1), a decision of log sequence 19600, but it differs from what MUSTER_LOG\'s transaction at 19600 derives: the log lost acknowledged writes and was written again (for 30012 ms)'),
        status('s3', 25143),
      ],
      25143,
      ['stream 10367 (muster:18505:5): differs from log 18505 event 5', 'j7: committed and finally aborted (timeout) on MUSTER_DECISIONS', 'stream 10368 (muster:18506:0): no such event in the log'],
    );
    expect(loss.highest).toBe(0);
    expect(loss.unbackedDecisions).toBe(2);
    expect(loss.examples).toHaveLength(3);
    expect(loss.examples[0]).toMatch(/^s1 refuses to lead: MUSTER_LOG went backwards \(it saw 19607/);
    expect(loss.examples[1]).toMatch(/^s2 refuses to lead: MUSTER_DECISIONS holds muster:19600:3/);
    expect(loss.examples[2]).toBe('2 decision(s) on MUSTER_DECISIONS the log read after them does not back (first: stream 10367 (muster:18505:5): differs from log 18505 event 5)');
  });
});
