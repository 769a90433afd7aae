import { join } from 'node:path';
import { freePort } from './freePort.ts';
import { natsServerHandle, newDataDir } from './natsServer.ts';
import type { NatsServerHandle, NatsServerOptions } from './natsServer.ts';

/** Options of a cluster: a server's, and whether the nodes keep their peers' client urls to themselves. */
export interface NatsClusterOptions extends NatsServerOptions {
  /**
   * The nodes do not tell clients their peers' client urls (`no_advertise`): a client reconnects
   * only to the urls it was given, so one given proxies never bypasses them.
   */
  noAdvertise?: boolean;
  /**
   * The port node `from` dials to reach node `to`'s routes (`clusterPort` by default), so a test
   * can put a proxy it controls between two nodes. Given, the nodes advertise no reachable route
   * url: their gossip never opens a route around the proxies.
   */
  routeVia?: (from: string, to: string, clusterPort: number) => Promise<number>;
}

/** A running n-node nats-server cluster on loopback. */
export interface NatsClusterHandle {
  /** Client urls of every node, for `connect({servers})`. */
  urls: string[];
  nodes: NatsServerHandle[];
  /** Stops every node and removes their folders. */
  stop(): Promise<void>;
}

/**
 * Starts `size` (3 by default) clustered nats-servers on loopback and waits for routes and a JetStream
 * meta leader; laid out again on fresh ports, up to twice more, when a port it chose was taken before
 * a node could bind it (another process's outgoing connection or server may draw the same port).
 */
export async function startNatsCluster(size = 3, opts: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startLaidOut(size, opts);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof Error) || !/address already in use/i.test(err.message)) throw err;
    }
  }
}

async function startLaidOut(size: number, opts: NatsClusterOptions): Promise<NatsClusterHandle> {
  const clusterName = `muster-${process.pid}-${Date.now().toString(36)}`;
  const layouts: { name: string; port: number; monitorPort: number; clusterPort: number; dataDir: string }[] = [];
  for (let i = 1; i <= size; i++) {
    layouts.push({
      name: `n${i}`,
      port: await freePort(),
      monitorPort: await freePort(),
      clusterPort: await freePort(),
      dataDir: newDataDir(opts.baseDir, `muster-nats-n${i}-`),
    });
  }
  const routesOf = async (from: string): Promise<string> => {
    const ports = await Promise.all(layouts.map((l) => (opts.routeVia === undefined || l.name === from ? l.clusterPort : opts.routeVia(from, l.name, l.clusterPort))));
    return ports.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ');
  };
  // port 1 (tcpmux) has no listener here: gossip that names it opens no route
  const nowhere = opts.routeVia === undefined ? '' : ', advertise: "127.0.0.1:1"';
  const routes = await Promise.all(layouts.map((l) => routesOf(l.name)));
  const handles = layouts.map((l, i) => {
    const storeDir = join(l.dataDir, 'jetstream');
    const config = [
      `server_name: ${l.name}`,
      `listen: "127.0.0.1:${l.port}"`,
      `http: "127.0.0.1:${l.monitorPort}"`,
      `jetstream { store_dir: "${storeDir}" }`,
      `cluster { name: "${clusterName}", listen: "127.0.0.1:${l.clusterPort}", routes: [${routes[i]}]${nowhere}${opts.noAdvertise === true ? ', no_advertise: true' : ''} }`,
      opts.extraConfig ?? '',
    ].join('\n');
    return natsServerHandle({ name: l.name, port: l.port, monitorPort: l.monitorPort, dataDir: l.dataDir, storeDir, config, peers: size - 1 }, opts);
  });
  const stop = async (): Promise<void> => {
    await Promise.all(handles.map((h) => h.stop()));
  };
  try {
    await Promise.all(handles.map((h) => h.start(opts.startTimeoutMs ?? 30_000)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls: handles.map((h) => h.url), nodes: handles, stop };
}
