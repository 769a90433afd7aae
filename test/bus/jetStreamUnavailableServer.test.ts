// A NATS node cut off from its peers still answers its clients, but not with JetStream: "JetStream
// system temporarily unavailable", a stream without a leader, or nothing. muster's clients move to a
// node that serves JetStream within seconds; before, they stayed until the partition ended. When no
// node serves it (a cluster without quorum), they stay put instead of moving around.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JETSTREAM_LEAVE_MS, publishInput } from '@muster/bus';
import type { Bus, ConnectionChange } from '@muster/bus';
import { clusterWithCuttableRoutes, connectOn, cut, stopCuttableCluster } from '../support/cuttableCluster.ts';
import type { CuttableCluster } from '../support/cuttableCluster.ts';
import { eventually } from '../support/schedulerProcess.ts';

// One input published through JetStream (MUSTER_IN's leader must take it): resolves once it is acknowledged.
const published = (client: Bus, n: number) => publishInput(client, 'muster.in.submit', { probe: n }, `probe-${n}`).then(() => true);

describe('a client whose NATS node is cut off from its peers', () => {
  let setup: CuttableCluster | undefined;
  let client: Bus | null = null;

  beforeAll(async () => {
    setup = await clusterWithCuttableRoutes();
  });

  afterEach(async () => {
    await client?.close();
  });

  afterAll(async () => {
    await stopCuttableCluster(setup);
  });

  it('moves to a node that serves JetStream and is answered within seconds', async () => {
    const { bus, links } = setup as CuttableCluster;
    const n3 = bus.urls[2] as string;
    const changes: ConnectionChange[] = [];
    client = await connectOn(bus, 2, 'cut-off-node-client', { timeoutMs: 1_000, jetStreamLeaveMs: JETSTREAM_LEAVE_MS, onConnection: (c) => changes.push(c) });
    const c = client;
    await eventually(() => published(c, 0), 30_000, 'a first input through n3');
    cut(links, 'n3');
    const since = Date.now();
    let n = 1;
    await eventually(() => published(c, n++), 40_000, 'an input acknowledged through another node');
    const ms = Date.now() - since;
    // the partition lasts as long as the test: only a move explains an answer. Here: the 3 s bound,
    // a look at the others, the reconnect, and at most a stream leader's re-election (5-7 s)
    expect(ms).toBeLessThan(15_000);
    expect(changes.map((x) => x.kind)).toEqual(expect.arrayContaining(['unavailable', 'reconnect']));
    expect(changes.find((x) => x.kind === 'unavailable')?.server).toBe(n3.replace('nats://', ''));
    expect(changes.find((x) => x.kind === 'reconnect')?.server).not.toBe(n3.replace('nats://', ''));
  }, 90_000);
});

describe('a client of a cluster without quorum', () => {
  let setup: CuttableCluster | undefined;
  let client: Bus | null = null;

  beforeAll(async () => {
    setup = await clusterWithCuttableRoutes();
  });

  afterAll(async () => {
    await client?.close();
    await stopCuttableCluster(setup);
  });

  it('stays on its node while no node serves JetStream, then is answered there', async () => {
    const { bus, links } = setup as CuttableCluster;
    const changes: ConnectionChange[] = [];
    client = await connectOn(bus, 0, 'no-quorum-client', { timeoutMs: 1_000, jetStreamLeaveMs: JETSTREAM_LEAVE_MS, onConnection: (c) => changes.push(c) });
    const c = client;
    await eventually(() => published(c, 0), 30_000, 'a first input');
    // every node alone: each answers pings, none serves JetStream
    cut(links, '*');
    await expect(published(c, 1)).rejects.toThrow();
    // many times the 3 s bound: a client that moved on every bound would have moved 6 times
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    expect(changes.filter((x) => x.kind === 'unavailable' || x.kind === 'disconnect')).toEqual([]);
    for (const proxy of links.values()) proxy.heal();
    await eventually(() => published(c, 2), 40_000, 'an input once the cluster has quorum again');
  }, 120_000);
});
