// The deployment's topology with local processes: three nats-server processes on the committed
// deploy/nats files (only listen addresses and store folders rewritten) form one JetStream cluster,
// admit no route without the route password, and keep the scheduler's R3 log writable when a node dies.
import { connect as tcpConnect } from 'node:net';
import { LOG_STREAM, appendTransactions, ensureStreams, streamDefinitions } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { transactionHash } from '@muster/core';
import type { Transaction } from '@muster/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeployedCluster } from '../support/natsConfig.ts';
import type { DeployedCluster } from '../support/natsConfig.ts';
import { NatsAdmin } from '../support/natsAdmin.ts';

let cluster: DeployedCluster;
let scheduler: Bus;
let admin: NatsAdmin;

async function monitor<T>(url: string, path: string): Promise<T> {
  return (await (await fetch(`${url}${path}`)).json()) as T;
}

const tx = (prev: string | null, at: number): Transaction => ({ v: 1, kind: 'fact', term: 1, leader: 's1', at, prev, session: 0, part: 1, parts: 1, events: [] });

/** What a server answers to a route that connects with `pass` (nats route protocol: INFO, then CONNECT). */
function routeAnswer(port: number, pass: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1');
    let received = '';
    let sent = false;
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no answer on route port ${port}: ${received}`)));
    socket.on('data', (chunk) => {
      received += chunk.toString();
      if (!sent && received.includes('\r\n')) {
        sent = true;
        socket.write(`CONNECT {"user":"route","pass":"${pass}","name":"intruder","verbose":false,"pedantic":false}\r\nPING\r\n`);
      }
      if (/-ERR|PONG/.test(received)) socket.end();
    });
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  cluster = await startDeployedCluster();
  scheduler = await cluster.connectAs('scheduler');
  admin = await NatsAdmin.connect(cluster.urls, cluster.credentials('admin'));
}, 120_000);

afterAll(async () => {
  try {
    await Promise.all([scheduler?.close(), admin?.close()]);
  } finally {
    await cluster?.stop();
  }
});

describe('the deployment\'s NATS cluster, from the committed configuration', () => {
  it('routes every node to the two others and elects one JetStream meta leader', async () => {
    const ids = await Promise.all(cluster.nodes.map(async (n) => (await monitor<{ server_id: string; server_name: string }>(n.monitorUrl, '/varz'))));
    expect(ids.map((v) => v.server_name)).toEqual(['nats-1', 'nats-2', 'nats-3']);
    const leaders = new Set<string>();
    for (const [i, node] of cluster.nodes.entries()) {
      const routez = await monitor<{ routes: { remote_id: string }[] }>(node.monitorUrl, '/routez');
      const others = ids.filter((_, j) => j !== i).map((v) => v.server_id);
      expect(new Set(routez.routes.map((r) => r.remote_id)), node.name).toEqual(new Set(others));
      const jsz = await monitor<{ meta_cluster: { name: string; leader: string; cluster_size: number } }>(node.monitorUrl, '/jsz');
      expect(jsz.meta_cluster).toMatchObject({ name: 'muster', cluster_size: 3 });
      leaders.add(jsz.meta_cluster.leader);
    }
    expect(leaders.size).toBe(1);
    expect(['nats-1', 'nats-2', 'nats-3']).toContain([...leaders][0]);
  });

  it('refuses a route without the route password', async () => {
    const port = cluster.nodes[0]?.clusterPort ?? 0;
    expect(await routeAnswer(port, 'not-the-password')).toMatch(/-ERR 'Authorization Violation'/);
    const routez = await monitor<{ num_routes: number }>(cluster.nodes[0]?.monitorUrl ?? '', '/routez');
    expect(routez.num_routes).toBe(2);
  });

  it('lets the scheduler user create the R3 streams, and its log stays writable when a node dies', async () => {
    const created = await ensureStreams(scheduler, { replicas: 3 });
    expect(created.map((r) => r.action)).toEqual(streamDefinitions.map(() => 'created'));
    const info = await admin.streamInfo(LOG_STREAM);
    expect(info.config.num_replicas).toBe(3);
    expect(info.cluster?.replicas).toHaveLength(2);

    const js = scheduler.withTimeout(10_000);
    const first = tx(null, 1);
    expect(await appendTransactions(js, [first], 0)).toEqual({ ok: true, seqs: [1] });

    // the log's stream leader dies; the two other replicas elect a new one and take the next append
    const leaderName = info.cluster?.leader;
    const leader = cluster.nodes.find((n) => n.name === leaderName);
    expect(leader).toBeDefined();
    await leader?.stop();
    await expect
      .poll(async () => (await admin.streamInfo(LOG_STREAM)).cluster?.leader ?? '', { timeout: 30_000, interval: 250 })
      .toSatisfy((name: string) => name !== leaderName && /^nats-[123]$/.test(name));
    // an append may time out while the new stream leader settles: its outcome is unknown, and the
    // writer repeats it, which is safe (same msg id: where expected, a duplicate ack says it landed)
    const second = tx(transactionHash(first), 2);
    let appended = await appendTransactions(js, [second], 1);
    for (let i = 0; i < 3 && !appended.ok && appended.code === 'timeout'; i++) appended = await appendTransactions(js, [second], 1);
    expect(appended).toEqual({ ok: true, seqs: [2] });
    // read back by sequence: the stream's new leader answers. (An ordered consumer created now may
    // time out: nats-server 2.9.10 may place its single replica on the stopped node, so readers must retry.)
    const stored = await Promise.all([1, 2].map(async (seq) => (await admin.message(LOG_STREAM, seq))?.json<Transaction>()));
    expect(stored).toEqual([first, tx(transactionHash(first), 2)]);
  }, 120_000);
});
