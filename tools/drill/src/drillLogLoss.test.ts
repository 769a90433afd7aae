import { describe, expect, it } from 'vitest';
import type { ReplicaStatus } from './drillCluster.ts';
import { checkLogLoss } from './drillLogLoss.ts';

const status = (id: string, seq: number, refusedBecause: string | null = null): ReplicaStatus => ({ id, role: 'standby', seq, term: 4, lastInputSeq: 0, stateHash: 'h', refusedBecause });

describe('checkLogLoss', () => {
  it('finds nothing when every replica is at or before the end of the log read', () => {
    expect(checkLogLoss([status('s1', 38), status('s2', 30)], 38)).toEqual({ logEnd: 38, highest: 0, examples: [] });
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
});
