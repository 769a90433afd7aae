// What the gang end-to-end tests run on: a real nats-server, one real scheduler (in this process,
// its metrics served) and two real agents, one node each, both at address 127.0.0.1; and the
// `muster` command against them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { MusterClient } from '@muster/client';
import type { JobDetails } from '@muster/client';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { freePort } from '@muster/stack';
import { runMuster } from '../cli/runMuster.ts';
import type { MusterRun } from '../cli/runMuster.ts';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

/** The running stack and what the tests do with it. */
export interface TwoAgentStack {
  bus: TestBus;
  scheduler: SchedulerHandle;
  agents: Agent[];
  client: MusterClient;
  /** A folder of the test's own (the agents' state dirs are in it). */
  dir: string;
  /** Runs `muster args… --nats <this server>`. */
  muster(args: string[]): Promise<MusterRun>;
  /** Writes a JobSpec to a file and submits it with `muster submit`; resolves with the run. */
  submit(spec: { id: string } & Record<string, unknown>): Promise<MusterRun>;
  /** The job once it has ended (neither pending nor running). */
  finished(jobId: string, timeoutMs: number): Promise<JobDetails>;
  stop(): Promise<void>;
}

/** Starts the stack with nodes `<prefix>1` and `<prefix>2` (8 cores, 16 GiB, 8 slots, no GPUs each). */
export async function startTwoAgentStack(prefix: string): Promise<TwoAgentStack> {
  const logger = pino({ level: 'silent' });
  const dir = mkdtempSync(join(tmpdir(), `muster-e2e-${prefix}-`));
  const bus = await startTestBus();
  const scheduler = await startScheduler({ natsUrl: bus.urls, id: prefix, logger, leaseMs: 300, heartbeatTimeoutMs: 0, metricsPort: await freePort() });
  await eventually(() => scheduler.role() === 'leader', 15_000, 'leadership');
  const agents: Agent[] = [];
  for (const id of [`${prefix}1`, `${prefix}2`]) {
    const node = { id, labels: {}, capacity: { cpu: 8000, memoryMb: 16384, slots: 8 }, gpus: [] };
    agents.push(await startAgent({ natsUrl: bus.urls, nodes: [node], address: '127.0.0.1', heartbeatMs: 200, logger, stateDir: join(dir, id), stopGraceMs: 1_000, outputLimits: { flushMs: 50 } }));
  }
  const client = new MusterClient(bus.bus, { timeoutMs: 10_000 });
  await eventually(async () => (await client.nodes()).length === 2, 15_000, 'both nodes to register');
  const muster = (args: string[]): Promise<MusterRun> => runMuster([...args, '--nats', bus.urls.join(',')], { timeoutMs: 240_000 });
  return {
    bus,
    scheduler,
    agents,
    client,
    dir,
    muster,
    submit(spec) {
      const file = join(dir, `${spec.id}.json`);
      writeFileSync(file, JSON.stringify(spec));
      return muster(['submit', file]);
    },
    finished: (jobId, timeoutMs) =>
      eventually(async () => {
        const job = (await client.job(jobId)) as JobDetails;
        return job.status === 'pending' || job.status === 'running' ? null : job;
      }, timeoutMs, `${jobId} to finish`),
    async stop() {
      await Promise.all(agents.map((a) => a.stop()));
      await scheduler.stop();
      await bus.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
