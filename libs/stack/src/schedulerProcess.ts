import { join } from 'node:path';
import { SCHEDULER_FLAGS } from '@muster/scheduler/flags';
import type { FlagValues } from '@muster/scheduler/flags';
import { spawnManaged } from './managedProcess.ts';
import type { ManagedProcess } from './managedProcess.ts';
import { newDataDir } from './natsServer.ts';
import { REPO_ROOT, schedulerEntry } from './repoPaths.ts';

/**
 * Options of one scheduler replica process: its id, NATS and log level, and any tunable of the
 * replica's table (@muster/scheduler/flags; the replica's default where absent, except
 * heartbeatTimeoutMs: 0 here, no node loss by silence, for tests without agents).
 */
export interface SchedulerProcessOptions extends FlagValues {
  id: string;
  /** NATS urls (a cluster's, so the replica fails over between nodes). */
  urls: string[];
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
  const tuning: FlagValues = { ...opts, heartbeatTimeoutMs: opts.heartbeatTimeoutMs ?? 0 };
  for (const f of SCHEDULER_FLAGS) {
    const value = tuning[f.option];
    if (value !== undefined) args.push(`--${f.flag}`, String(value));
  }
  const logFile = opts.logFile ?? join(newDataDir(undefined, `muster-sched-${opts.id}-`), 'scheduler.log');
  const proc = spawnManaged({ name: `scheduler ${opts.id}`, command: process.execPath, args, logFile, cwd: REPO_ROOT, ...(opts.env === undefined ? {} : { env: opts.env }) });
  return Object.assign(proc, { id: opts.id });
}
