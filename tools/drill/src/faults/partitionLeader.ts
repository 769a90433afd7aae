import { partitionUnavailable } from '../drillNetworkChecks.ts';
import { partitionLeader as cutLeaderOff } from '../drillPartition.ts';
import type { DrillFault } from './drillFault.ts';
import { targetHit } from './targetHit.ts';

/** The leader cut off from every NATS node for `partitionMs` (longer than the lease; drillPartition.ts). */
export const partitionLeader: DrillFault<'partition-leader'> = {
  kind: 'partition-leader',
  help: 'the leader cut off from NATS (iptables on its cgroup) for longer than the lease',
  needs: 'root, iptables and a cgroup v2 hierarchy',
  inDefault: true,
  natsNode: false,
  unavailable: partitionUnavailable,
  inject: cutLeaderOff,
  leaderHit: targetHit,
};
