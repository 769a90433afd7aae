// A 3-node nats-server cluster whose routes run through proxies a test cuts (one node cut off from
// its peers still answers its own clients), and clients placed on a chosen node.
import { connect } from '@muster/bus';
import type { Bus, ConnectOptions } from '@muster/bus';
import { startCuttableProxy } from './cuttableProxy.ts';
import type { CuttableProxy } from './cuttableProxy.ts';
import { startTestBus } from './natsBus.ts';
import type { TestBus } from './natsBus.ts';

/** The cluster and its route links, each named by the nodes it joins (`n1->n3`). */
export interface CuttableCluster {
  bus: TestBus;
  links: Map<string, CuttableProxy>;
}

/** Starts the cluster (streams applied, R3). */
export async function clusterWithCuttableRoutes(): Promise<CuttableCluster> {
  const links = new Map<string, CuttableProxy>();
  const bus = await startTestBus({
    clusterSize: 3,
    routeVia: async (from, to, port) => {
      const proxy = await startCuttableProxy(port);
      links.set(`${from}->${to}`, proxy);
      return proxy.port;
    },
  });
  return { bus, links };
}

/** Stops the cluster and its proxies. */
export async function stopCuttableCluster(setup: CuttableCluster | undefined): Promise<void> {
  await setup?.bus.stop();
  for (const proxy of setup?.links.values() ?? []) await proxy.close();
}

/** Cuts every route link that joins `node` (or every link, for '*'). */
export function cut(links: Map<string, CuttableProxy>, node: string): void {
  for (const [name, proxy] of links) if (node === '*' || name.split('->').includes(node)) proxy.cut();
}

/** Whether a connection named `name` is on node `node` (0-based), by the node's monitoring. */
export async function isOn(bus: TestBus, node: number, name: string): Promise<boolean> {
  const monitorPort = bus.cluster?.nodes[node]?.monitorPort;
  const connz = (await (await fetch(`http://127.0.0.1:${monitorPort}/connz`)).json()) as { connections?: { name?: string }[] };
  return connz.connections?.some((c) => c.name === name) === true;
}

/**
 * Opens `open` (given every node's url, as replicas and agents are: a node cut off from its peers
 * stops gossiping theirs) until the connection named `name` happens to be on `node`; an open that
 * fails (a connect that timed out on a loaded machine) is tried again.
 */
export async function openOn<T extends { close(): Promise<void> } | { stop(): Promise<void> }>(bus: TestBus, node: number, name: string, open: () => Promise<T>): Promise<T> {
  let lastError: unknown = null;
  for (let attempt = 0; attempt < 50; attempt++) {
    const opened = await open().catch((err: unknown) => {
      lastError = err;
      return null;
    });
    if (opened === null) continue;
    if (await isOn(bus, node, name)) return opened;
    await ('close' in opened ? opened.close() : opened.stop());
  }
  throw new Error(`never connected to node ${node}${lastError === null ? '' : `: ${String(lastError)}`}`);
}

/** A bus client named `name` on node `node`, with `opts` beside every node's url. */
export function connectOn(bus: TestBus, node: number, name: string, opts: Omit<ConnectOptions, 'servers' | 'name'> = {}): Promise<Bus> {
  return openOn(bus, node, name, () => connect({ name, servers: bus.urls, ...opts }));
}
