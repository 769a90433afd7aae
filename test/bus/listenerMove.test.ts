// Bus.moveToListener: a connection moves to a server through which a subject's listeners are
// reached only when none is reached through its own, and only when another server reaches one; a
// cluster where nobody listens (every replica down) moves nobody.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus, ConnectionChange } from '@muster/bus';
import { clusterWithCuttableRoutes, connectOn, cut, isOn, stopCuttableCluster } from '../support/cuttableCluster.ts';
import type { CuttableCluster } from '../support/cuttableCluster.ts';
import { eventually } from '../support/schedulerProcess.ts';

describe('a connection that moves to where a subject is listened to', () => {
  let setup: CuttableCluster | undefined;
  const clients: Bus[] = [];

  beforeAll(async () => {
    setup = await clusterWithCuttableRoutes();
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await stopCuttableCluster(setup);
  }, 60_000);

  it('stays where it is while nobody listens anywhere, and while its own server reaches a listener', async () => {
    const { bus } = setup as CuttableCluster;
    const changes: ConnectionChange[] = [];
    const client = await connectOn(bus, 2, 'stays', { onConnection: (c) => changes.push(c) });
    clients.push(client);
    expect(await client.moveToListener('muster.test.nobody', '{}')).toBeNull();
    const listener = await connectOn(bus, 0, 'listener-a');
    clients.push(listener);
    listener.subscribe('muster.test.heard', () => undefined);
    await listener.flush();
    // interest crosses the routes: the client's own server reaches the listener on n1
    await eventually(async () => (await client.moveToListener('muster.test.heard', '{}')) === null && (await isOn(bus, 2, 'stays')), 10_000, 'no move');
    expect(changes).toEqual([]);
  }, 60_000);

  it('moves off a node cut off from its peers to one that reaches the listener, which then hears it', async () => {
    const { bus, links } = setup as CuttableCluster;
    const changes: ConnectionChange[] = [];
    const client = await connectOn(bus, 2, 'moves', { onConnection: (c) => changes.push(c) });
    clients.push(client);
    const listener = await connectOn(bus, 0, 'listener-b');
    clients.push(listener);
    const heard: string[] = [];
    listener.subscribe('muster.test.beat', (m) => heard.push(m.text()));
    await listener.flush();
    cut(links, 'n3');
    const to = await eventually(() => client.moveToListener('muster.test.beat', '{}'), 20_000, 'a move');
    expect(to).not.toBe(bus.urls[2]?.replace('nats://', ''));
    expect(changes.map((c) => c.kind)).toContain('unheard');
    await eventually(async () => !(await isOn(bus, 2, 'moves')), 10_000, 'the client off n3');
    await eventually(async () => {
      client.publish('muster.test.beat', 'after the move');
      await client.flush();
      return heard.includes('after the move');
    }, 10_000, 'the listener to hear the client');
  }, 60_000);
});
