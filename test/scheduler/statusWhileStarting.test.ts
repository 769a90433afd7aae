// A replica answers its status while it rebuilds (role 'starting'), so that a drill or an operator
// can tell a slow start from a replica that stopped answering: in the hour soak, restarted standbys
// whose rebuild NATS faults slowed for 30-60 s were named silent. Real nats-server; the replica's
// user is denied every read of the log, so its rebuild fails and retries, until a config reload
// allows them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@muster/bus';
import type { Bus } from '@muster/bus';
import type { SchedulerHandle } from '@muster/scheduler';
import { allowEverything, commitAsAdmin, startDeniedServer, startReplicaAs } from '../support/deniedReplica.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { eventually, replicaStatus } from '../support/schedulerProcess.ts';

const DENIED = ['$JS.API.CONSUMER.CREATE.MUSTER_LOG', '$JS.API.CONSUMER.CREATE.MUSTER_LOG.>', '$JS.API.STREAM.MSG.GET.MUSTER_LOG', '$JS.API.DIRECT.GET.MUSTER_LOG', '$JS.API.DIRECT.GET.MUSTER_LOG.>']
  .map((s) => `"${s}"`)
  .join(', ');

describe('a replica that is still rebuilding', () => {
  let server: NatsServerHandle;
  let bus: Bus;

  const start = (id: string, user: string): Promise<SchedulerHandle> => startReplicaAs(server, id, user);

  beforeAll(async () => {
    server = await startDeniedServer(DENIED);
    bus = await connect({ servers: server.url, name: 'test', user: 'admin', pass: 'admin' });
    await commitAsAdmin(server, bus, 1);
  }, 60_000);

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
  });

  it("answers its status as 'starting' until it has rebuilt, then as a standby or leader", async () => {
    let s2: SchedulerHandle | null = null;
    const starting = start('s2', 'replica').then((h) => (s2 = h));
    try {
      // before the change it answered nothing until its rebuild was done: here, never
      const first = await eventually(async () => await replicaStatus(bus, 's2'), 10_000, 's2 answering while it rebuilds');
      expect(first.role).toBe('starting');
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await replicaStatus(bus, 's2'))?.role).toBe('starting');
      expect(s2).toBeNull();
      allowEverything(server, DENIED);
      await starting;
      const rebuilt = await eventually(async () => {
        const s = await replicaStatus(bus, 's2');
        return s !== null && s.role !== 'starting' ? s : null;
      }, 15_000, 's2 rebuilt');
      expect(['standby', 'leader']).toContain(rebuilt.role);
      expect(rebuilt.seq).toBeGreaterThan(first.seq);
    } finally {
      await starting.then((h) => h.stop(), () => undefined);
    }
  }, 60_000);
});
