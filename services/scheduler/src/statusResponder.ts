import { nativeStateHash, subjects } from '@muster/bus';
import type { Bus, BusSubscription } from '@muster/bus';
import type { ReplicaStatus } from '@muster/core';
import type { Replica } from './replica.ts';

/**
 * Answers `muster.replica.<id>.status` (and the broadcast `muster.replica.status`, every replica
 * replying) so that drills and operators can compare replicas: same seq must mean same hash.
 */
export function serveStatus(bus: Bus, id: string, replica: Replica): BusSubscription[] {
  const status = (): ReplicaStatus => {
    const state = replica.state;
    return {
      id,
      role: replica.role(),
      seq: state.seq,
      term: state.term,
      lastInputSeq: state.lastInputSeq,
      stateHash: nativeStateHash(state, replica.ledger.hashCache),
      refusedBecause: replica.refusedBecause(),
    };
  };
  return [subjects.replicaStatus(id), subjects.allReplicasStatus].map((subject) => bus.serve(subject, () => JSON.stringify(status())));
}
