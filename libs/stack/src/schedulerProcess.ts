import { join } from 'node:path';
import { spawnManaged } from './managedProcess.ts';
import type { ManagedProcess } from './managedProcess.ts';
import { newDataDir } from './natsServer.ts';
import { REPO_ROOT, schedulerEntry } from './repoPaths.ts';

/** Options of one scheduler replica process (flags of @muster/scheduler's main). */
export interface SchedulerProcessOptions {
  id: string;
  /** NATS urls (a cluster's, so the replica fails over between nodes). */
  urls: string[];
  leaseMs?: number;
  /** 0 disables node loss by silence (the default here: tests without agents). */
  heartbeatTimeoutMs?: number;
  checkpointEvery?: number;
  snapshotEvery?: number;
  snapshotEveryEvents?: number;
  replicas?: number;
  /** At most this many buffered inputs ingested in one turn (the replica's default when absent). */
  maxBatchInputs?: number;
  /** pino level (default debug). */
  logLevel?: string;
  /** Output is appended here; default: `scheduler.log` in a new temporary folder. */
  logFile?: string;
  env?: NodeJS.ProcessEnv;
}

/** A running replica process: `node services/scheduler/dist/main.js …` (the built JavaScript). */
export type SchedulerProcess = ManagedProcess & { readonly id: string };

/** Spawns one scheduler replica as its own process, so that it can be killed with -9 or paused with SIGSTOP. */
export function spawnScheduler(opts: SchedulerProcessOptions): SchedulerProcess {
  const args = ['--enable-source-maps', schedulerEntry(), '--id', opts.id, '--nats', opts.urls.join(','), '--log-level', opts.logLevel ?? 'debug'];
  const flag = (name: string, value: number | undefined): void => {
    if (value !== undefined) args.push(`--${name}`, String(value));
  };
  flag('lease-ms', opts.leaseMs);
  flag('heartbeat-timeout-ms', opts.heartbeatTimeoutMs ?? 0);
  flag('checkpoint-every', opts.checkpointEvery);
  flag('snapshot-every', opts.snapshotEvery);
  flag('snapshot-every-events', opts.snapshotEveryEvents);
  flag('replicas', opts.replicas);
  flag('max-batch-inputs', opts.maxBatchInputs);
  const logFile = opts.logFile ?? join(newDataDir(undefined, `muster-sched-${opts.id}-`), 'scheduler.log');
  const proc = spawnManaged({ name: `scheduler ${opts.id}`, command: process.execPath, args, logFile, cwd: REPO_ROOT, ...(opts.env === undefined ? {} : { env: opts.env }) });
  return Object.assign(proc, { id: opts.id });
}
