// A nats-server that joins a running cluster after it formed: a node the cluster's meta group has
// not heard of until then.
import { freePort, startNatsServer } from './natsServer.ts';
import type { NatsClusterHandle, NatsServerHandle } from './natsServer.ts';

interface Varz {
  cluster: { name: string; cluster_port: number };
}

/** Starts node `name` with routes to every node of `cluster` (under the cluster's own name), ready once JetStream is on. */
export async function startJoiningNode(cluster: NatsClusterHandle, name: string): Promise<NatsServerHandle> {
  const varz = await Promise.all(cluster.nodes.map(async (n) => (await (await fetch(`http://127.0.0.1:${n.monitorPort}/varz`)).json()) as Varz));
  const routes = varz.map((v) => `"nats-route://127.0.0.1:${v.cluster.cluster_port}"`).join(', ');
  const clusterName = varz[0]?.cluster.name ?? '';
  return startNatsServer({ serverName: name, extraConfig: `cluster { name: "${clusterName}", listen: "127.0.0.1:${await freePort()}", routes: [${routes}] }` });
}
