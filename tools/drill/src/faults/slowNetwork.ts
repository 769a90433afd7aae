import { slowNetworkUnavailable } from '../drillNetworkChecks.ts';
import { slowNetwork as slowReplicaLinks } from '../drillPartition.ts';
import type { DrillFault } from './drillFault.ts';

/** Latency and loss between every replica and NATS for `slowMs` (the drill's proxies and iptables; drillPartition.ts). */
export const slowNetwork: DrillFault<'slow-network'> = {
  kind: 'slow-network',
  help: 'every replica\'s traffic to NATS delayed (200 ms a chunk) and 5 % of its packets dropped for a while',
  needs: 'root and iptables',
  inDefault: true,
  natsNode: false,
  unavailable: slowNetworkUnavailable,
  inject: slowReplicaLinks,
  detail: ({ slow }) =>
    slow === undefined
      ? ''
      : ` (${slow.delayMs} ms and ${slow.loss * 100} % loss on ${slow.connections} replica connections through the proxies; a status request took ${slow.statusMs.before} ms before, ${slow.statusMs.during} ms during)`,
};
