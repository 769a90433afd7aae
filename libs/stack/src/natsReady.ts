/** Where a starting nats-server can be watched. */
export interface NatsReadyTarget {
  name: string;
  monitorPort: number;
  /** Other nodes its routes must reach (0 for a single server). */
  peers: number;
  running(): boolean;
  log(): string;
}

/**
 * Polls the server's monitoring port until it is ready: JetStream enabled (single server), or
 * routes to every peer and a JetStream meta leader (cluster node); throws with the log's tail if it
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
        const jsz = (await (await fetch(`${base}/jsz`, { signal: AbortSignal.timeout(2_000) })).json()) as { meta_cluster?: { leader?: string } };
        const leader = jsz.meta_cluster?.leader ?? '';
        // every peer routed and a JetStream meta leader elected: streams can be placed and used
        if ((routez.num_routes ?? 0) >= target.peers && leader !== '') return;
        last = `routes ${routez.num_routes ?? 0}/${target.peers}, meta leader '${leader}'`;
      }
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nats-server ${target.name} not ready after ${timeoutMs} ms (${last}):\n${target.log().slice(-4000)}`);
}
