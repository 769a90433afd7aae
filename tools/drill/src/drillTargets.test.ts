import { describe, expect, it } from 'vitest';
import type { DrillCluster, ReplicaStatus } from './drillCluster.ts';
import type { FaultContext, FaultRecord } from './drillFaultRecord.ts';
import { currentLeader } from './drillTargets.ts';

// Two kill-leader faults an instant apart both looked for the leader while the other waited for
// the replicas' statuses, both took s1, and both started s1 again: two processes as s1 fought over
// the lease for the rest of an hour soak. The leader is claimed before that wait.

const status = (id: string, role: 'leader' | 'standby'): ReplicaStatus => ({ id, role, refusedBecause: null }) as unknown as ReplicaStatus;

function context(): FaultContext {
  const cluster = {
    replicaIds: ['s1', 's2', 's3'],
    paused: new Set<string>(),
    replica: () => ({ running: true }),
    leader: async () => status('s1', 'leader'),
    // the wait during which the other fault looks
    statuses: async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return new Map([['s1', status('s1', 'leader')], ['s2', status('s2', 'standby')], ['s3', status('s3', 'standby')]]);
    },
  } as unknown as DrillCluster;
  return { cluster, busy: new Set<string>() } as unknown as FaultContext;
}

const record = (n: number): FaultRecord => ({ n, kind: 'kill-leader', target: null, at: 0, endedAt: 0, skipped: null, error: null, nextLeader: null });

describe('the leader as a fault target', () => {
  it('goes to one of two faults that look at once; the other is skipped', async () => {
    const ctx = context();
    const [a, b] = [record(1), record(2)];
    const targets = await Promise.all([currentLeader(a, ctx), currentLeader(b, ctx)]);
    expect(targets).toEqual(['s1', null]);
    expect(b.skipped).toBe('leader s1 is under another fault');
    expect([...ctx.busy]).toEqual(['s1']);
  });

  it('is released again when no standby answers as one', async () => {
    const ctx = context();
    const cluster = ctx.cluster as unknown as { statuses: () => Promise<Map<string, ReplicaStatus | null>> };
    cluster.statuses = async () => new Map([['s1', status('s1', 'leader')], ['s2', null], ['s3', null]]);
    const r = record(1);
    expect(await currentLeader(r, ctx)).toBeNull();
    expect(r.skipped).toBe('no standby answers as one to take over');
    expect(ctx.busy.size).toBe(0);
  });
});
