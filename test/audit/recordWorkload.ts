// Runs a workload against real scheduler replicas on a nats-server of its own and reads back what
// they wrote: the log, the inputs it ingested, and the leader's own state hash.
import pino from 'pino';
import { connect, ensureStreams, readInputs, readLog } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { stateHash } from '@muster/core';
import type { Input, LoggedTransaction } from '@muster/core';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import type { Replicas } from './workloadDriver.ts';
import { sleep } from '@muster/bus';
import { WorkloadDriver } from './workloadDriver.ts';
import type { Workload } from './workloads.ts';

/** Scheduler tuning for recorded runs: frequent checkpoints and snapshots, quick takeover and loss. */
export const RECORDING_OPTIONS = { leaseMs: 500, heartbeatTimeoutMs: 1000, checkpointEvery: 8, snapshotEvery: 20 };

/** What a workload left behind. */
export interface Recording {
  log: LoggedTransaction[];
  inputs: Input[];
  /** The hash of the state the (last) leader folded, computed by the scheduler, not by replay. */
  leaderStateHash: string;
}

/** A workload run on a live server: its connection and replicas stay up until `stop()`. */
export interface LiveRun extends Recording {
  server: NatsServerHandle;
  bus: Bus;
  /** Stops the scheduler replicas only (the server and the connection stay up). */
  stopReplicas(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs `workload` on a fresh nats-server and keeps everything running for a live audit. */
export async function runLive(workload: Workload): Promise<LiveRun> {
  const server = await startNatsServer();
  const handles = new Map<string, SchedulerHandle>();
  let bus: Bus | null = null;
  let driver: WorkloadDriver | null = null;
  const stopReplicas = async (): Promise<void> => {
    driver?.close();
    await Promise.all([...handles.values()].map((h) => h.stop()));
    handles.clear();
  };
  const stop = async (): Promise<void> => {
    await stopReplicas();
    await bus?.close();
    await server.stop();
  };
  try {
    const replicas: Replicas = {
      async start(id) {
        const h = await startScheduler({ natsUrl: server.url, id, logger: pino({ level: process.env['RECORD_LOG_LEVEL'] ?? 'silent' }), ...RECORDING_OPTIONS });
        handles.set(id, h);
        return h;
      },
      async stop(id) {
        await handles.get(id)?.stop();
        handles.delete(id);
      },
      async leader(timeoutMs = 15_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const h = [...handles.values()].find((r) => r.role() === 'leader');
          if (h !== undefined) return h;
          if (Date.now() > deadline) throw new Error('no replica leads');
          await sleep(20);
        }
      },
    };
    bus = await connect({ servers: server.url, name: `workload-${workload.name}` });
    // the streams exist before any replica starts, so inputs can queue up before a leader reads them
    await ensureStreams(bus, { replicas: 1 });
    for (const id of workload.replicas) {
      await replicas.start(id);
      // the first replica leads before the next one starts, so every recording begins the same way
      if (id === workload.replicas[0]) await replicas.leader();
    }
    driver = new WorkloadDriver(workload.name, bus, replicas);
    await workload.run(driver);
    const leaderStateHash = stateHash((await replicas.leader()).state());
    const log: LoggedTransaction[] = [];
    for await (const entry of readLog(bus)) log.push(entry);
    const inputs: Input[] = [];
    for await (const { seq, subject, data } of readInputs(bus)) inputs.push({ seq, subject, data });
    return { log, inputs, leaderStateHash, server, bus, stopReplicas, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Runs `workload` on a fresh nats-server, reads back what it wrote, and stops everything. */
export async function recordWorkload(workload: Workload): Promise<Recording> {
  const run = await runLive(workload);
  await run.stop();
  return { log: run.log, inputs: run.inputs, leaderStateHash: run.leaderStateHash };
}
