// One in-process scheduler leading on a nats-server of its own, with a client connection and the
// nodes a test registers first: the setup of the single-leader integration tests.
import pino from 'pino';
import { connect, publishInput, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle, SchedulerOptions } from '@muster/scheduler';
import { startNatsServer } from './natsServer.ts';
import { eventually } from './schedulerProcess.ts';

/** A leading scheduler `s1` and a client connection to its server; `stop` ends them and the server. */
export interface SingleLeader {
  bus: Bus;
  /** The server's url, for another replica of the test's own. */
  url: string;
  scheduler: SchedulerHandle;
  stop(): Promise<void>;
}

/** Starts a server and scheduler `s1` (lease 300 ms, no heartbeat timeout, plus `options`), waits until it leads, and registers `nodes`. */
export async function startSingleLeader(nodes: readonly { id: string }[], options: Partial<SchedulerOptions> = {}): Promise<SingleLeader> {
  const server = await startNatsServer();
  const scheduler = await startScheduler({ natsUrl: server.url, id: 's1', logger: pino({ level: 'silent' }), leaseMs: 300, heartbeatTimeoutMs: 0, ...options });
  const bus = await connect({ servers: server.url, name: 'test' });
  await eventually(() => scheduler.role() === 'leader', 10_000, 'leadership');
  for (const node of nodes) await publishInput(bus, subjects.nodeInput(node.id, 'register'), node, `${node.id}:register:1`);
  return {
    bus,
    url: server.url,
    scheduler,
    stop: async () => {
      await bus.close();
      await scheduler.stop();
      await server.stop();
    },
  };
}
