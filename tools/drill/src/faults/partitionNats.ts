import { partitionUnavailable } from '../drillNetworkChecks.ts';
import { partitionNats as cutNatsNodeOff } from '../drillPartition.ts';
import type { DrillFault } from './drillFault.ts';

/**
 * One NATS node cut off from the other two for `natsPartitionMs`. Not in the default set:
 * nats-server 2.9.10 fails it (docs/drills.md: the cut-off node's copy of a stream stays stale
 * after the heal, serves readers, and, elected later, loses acknowledged writes); run on demand.
 */
export const partitionNats: DrillFault<'partition-nats'> = {
  kind: 'partition-nats',
  help: 'one NATS node cut off from the other two for longer than its raft election timeout (not in the default set: nats-server 2.9.10 fails it, docs/drills.md)',
  needs: 'root, iptables and a cgroup v2 hierarchy',
  inDefault: false,
  natsNode: true,
  unavailable: partitionUnavailable,
  inject: cutNatsNodeOff,
};
