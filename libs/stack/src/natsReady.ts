/** Where a starting nats-server can be watched. */
export interface NatsReadyTarget {
  name: string;
  monitorPort: number;
  /** Other nodes its routes must reach (0 for a single server). */
  peers: number;
  running(): boolean;
  log(): string;
}

// what /jsz says of the JetStream meta group (2.9 lists the other peers, `replicas`, on the leader
// only; 2.15 on every node, where a follower sees the other follower as not current)
interface MetaCluster {
  leader?: string;
  replicas?: { name: string; current?: boolean; offline?: boolean }[];
}

// the peers the meta leader has not heard, asked of node `name` (0 unless it is the leader: only
// the leader can tell)
function unheardPeers(meta: MetaCluster | undefined, name: string, peers: number): number {
  const replicas = meta?.replicas;
  if (replicas === undefined || meta?.leader !== name) return 0;
  return Math.max(0, peers - replicas.filter((r) => r.current === true && r.offline !== true).length);
}

/**
 * Polls the server's monitoring port until it is ready: JetStream enabled (single server), or
 * routes to every peer, a JetStream meta leader and, on the leader, every peer current (cluster
 * node); throws with the log's tail if it
 * exits or the time runs out.
 */
export async function waitNatsReady(target: NatsReadyTarget, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const base = `http://127.0.0.1:${target.monitorPort}`;
  let last = 'not polled yet';
  while (Date.now() < deadline) {
    if (!target.running()) throw new Error(`nats-server ${target.name} exited during start-up:\n${target.log().slice(-4000)}`);
    try {
      if (target.peers === 0) {
        const res = await fetch(`${base}/healthz?js-enabled-only=true`, { signal: AbortSignal.timeout(2_000) });
        if (res.ok) return;
        last = `HTTP ${res.status}`;
      } else {
        const routez = (await (await fetch(`${base}/routez`, { signal: AbortSignal.timeout(2_000) })).json()) as { num_routes?: number };
        const jsz = (await (await fetch(`${base}/jsz`, { signal: AbortSignal.timeout(2_000) })).json()) as { meta_cluster?: MetaCluster };
        const leader = jsz.meta_cluster?.leader ?? '';
        const unheard = unheardPeers(jsz.meta_cluster, target.name, target.peers);
        // every peer routed, a JetStream meta leader elected and, on the leader, every peer heard
        // (a peer the leader counts offline fails stream placement): streams can be placed and used
        if ((routez.num_routes ?? 0) >= target.peers && leader !== '' && unheard === 0) return;
        last = `routes ${routez.num_routes ?? 0}/${target.peers}, meta leader '${leader}', peers the leader has not heard ${unheard}`;
      }
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nats-server ${target.name} not ready after ${timeoutMs} ms (${last}):\n${target.log().slice(-4000)}`);
}
