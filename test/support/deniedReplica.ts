// A nats-server whose `replica` user is denied some JetStream API subjects (`admin` is not), the
// denial lifted later by a config reload: how tests make one replica's reads fail on a real server.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { startNatsServer } from './natsServer.ts';
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
