// A nats-server whose `replica` user is denied some JetStream API subjects (`admin` is not), the
// denial lifted later by a config reload: how tests make one replica's reads fail on a real server.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { publishInput, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { readDecisionStream } from './musterLog.ts';
import { startNatsServer } from './natsServer.ts';
import { eventually } from './schedulerProcess.ts';
import type { NatsServerHandle } from './natsServer.ts';

/** The server's authorization block: users `admin` and `replica` (passwords the same), `replica` denied publishing to `deny` (quoted subjects, comma-separated). */
export function authorization(deny: string): string {
  return `
authorization {
  users = [
    { user: admin, password: admin }
    { user: replica, password: replica, permissions: { publish: { deny: [${deny}] } } }
  ]
}
`;
}

/** Starts a server whose `replica` user is denied `deny`. */
export function startDeniedServer(deny: string): Promise<NatsServerHandle> {
  return startNatsServer({ extraConfig: authorization(deny) });
}

/** Lifts the denial: rewrites the config and has the server reload it (SIGHUP). */
export function allowEverything(server: NatsServerHandle, deny: string): void {
  const configPath = join(server.dataDir, 'nats.conf');
  writeFileSync(configPath, readFileSync(configPath, 'utf8').replace(authorization(deny), authorization('"nothing.denied"')));
  process.kill(server.pid, 'SIGHUP');
}

/** A replica in this process as `user` (admin or replica), with a short lease and no snapshots. */
export function startReplicaAs(server: NatsServerHandle, id: string, user: string): Promise<SchedulerHandle> {
  return startScheduler({ natsUrl: server.url, id, user, pass: user, logger: pino({ level: 'silent' }), leaseMs: 300, heartbeatTimeoutMs: 0, snapshotEvery: 0 });
}

/** Has replica s1, as `admin`, lead, register one node of 64 slots, commit `jobs` one-member jobs (j0, j1, …), and stop: a log for another replica to rebuild from. */
export async function commitAsAdmin(server: NatsServerHandle, bus: Bus, jobs: number): Promise<void> {
  const s1 = await startReplicaAs(server, 's1', 'admin');
  try {
    await eventually(() => s1.role() === 'leader', 10_000, 's1 leading');
    const node = { id: 'n1', labels: {}, capacity: { cpu: 64, memoryMb: 65_536, slots: 64 }, gpus: [] };
    await publishInput(bus, subjects.nodeInput(node.id, 'register'), node, 'n1:register:1');
    for (let i = 0; i < jobs; i++) {
      await publishInput(bus, subjects.submit, { id: `j${i}`, identity: { user: 'alice' }, tasks: 1, resources: { cpu: 1, memoryMb: 64 }, runtimeMs: 600_000 }, `j${i}:1`);
    }
    await eventually(async () => (await readDecisionStream(bus)).filter((m) => m.body.type === 'GangCommitted').length === jobs || null, 15_000, 'every job committed');
  } finally {
    await s1.stop();
  }
}
