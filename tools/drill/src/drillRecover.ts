import { within } from '@muster/stack';
import type { DrillCluster } from './drillCluster.ts';
import { sleep } from './drillSleep.ts';

/**
 * Brings the cluster back whole: resumes paused replicas, restarts dead ones and stopped NATS
 * nodes, then waits (at most `timeoutMs`) until every replica answers and one leads. Returns
 * what is still wrong, or null.
 */
export async function recoverCluster(cluster: DrillCluster, timeoutMs = 60_000): Promise<string | null> {
  for (const id of cluster.replicaIds) {
    const proc = cluster.replica(id);
    if (cluster.paused.has(id)) {
      proc.signal('SIGCONT');
      cluster.paused.delete(id);
    }
    if (!proc.running) cluster.startReplica(id);
  }
  for (const node of cluster.nats.nodes) {
    if (!node.running && (await within(node.restart().then(() => true, () => false), 45_000)) !== true) return `nats ${node.name} did not come back`;
  }
  const deadline = Date.now() + timeoutMs;
  let last = 'not asked yet';
  while (Date.now() < deadline) {
    const statuses = [...(await cluster.statuses(1_000)).entries()];
    const silent = statuses.filter(([, s]) => s === null).map(([id]) => id);
    const starting = statuses.filter(([, s]) => s?.role === 'starting').map(([id]) => id);
    const leaders = statuses.filter(([, s]) => s?.role === 'leader').map(([id]) => id);
    if (silent.length === 0 && starting.length === 0 && leaders.length === 1) return null;
    last = silent.length > 0 ? `${silent.join(', ')} not answering` : starting.length > 0 ? `${starting.join(', ')} still starting` : `${leaders.length} replicas answer as leader`;
    await sleep(250);
  }
  return `cluster not whole after ${timeoutMs} ms: ${last}`;
}
