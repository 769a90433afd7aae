import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { eventually } from '../support/schedulerProcess.ts';

const REPORT_MS = 200;

// A restarted standby in the hour soak waited 40 minutes without one log line at warn
// (docs/drills.md). A start that takes long says where it is, and stops saying so once it is done.
describe('a replica whose start takes long', () => {
  let server: NatsServerHandle;
  let replica: SchedulerHandle | undefined;
  const lines: { msg?: string; phase?: string; ms?: number; at: number }[] = [];

  beforeAll(async () => {
    server = await startNatsServer();
  }, 30_000);

  afterAll(async () => {
    if (server !== undefined && server.running) process.kill(server.pid, 'SIGCONT');
    await replica?.stop();
    await server?.stop();
  });

  it('reports its phase at warn while it waits, and nothing once it serves', async () => {
    const logger = pino({ level: 'warn' }, {
      write(line: string) {
        lines.push({ ...(JSON.parse(line) as { msg?: string; phase?: string; ms?: number }), at: performance.now() });
      },
    });
    // the server takes the connection but answers nothing: the start waits in its first step
    process.kill(server.pid, 'SIGSTOP');
    const starting = startScheduler({ natsUrl: server.url, id: 's1', logger, leaseMs: 600, heartbeatTimeoutMs: 0, snapshotEvery: 0, startupReportMs: REPORT_MS });
    try {
      await eventually(() => lines.filter((l) => l.msg === 'still starting').length >= 2, 5_000, 'two reports while the server is stopped');
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
    const waiting = lines.filter((l) => l.msg === 'still starting');
    expect(waiting[0]!.phase).toBe('connecting');
    expect(waiting[0]!.ms).toBeGreaterThanOrEqual(REPORT_MS - 50);
    replica = await starting;
    await eventually(() => replica!.role() === 'leader', 10_000, 's1 leading');
    const served = performance.now();
    await new Promise((r) => setTimeout(r, 3 * REPORT_MS));
    expect(lines.filter((l) => l.msg === 'still starting' && l.at > served)).toEqual([]);
  }, 30_000);
});
