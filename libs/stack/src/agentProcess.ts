import { join } from 'node:path';
import { spawnManaged } from './managedProcess.ts';
import type { ManagedProcess } from './managedProcess.ts';
import { newDataDir } from './natsServer.ts';
import { REPO_ROOT, cliEntry } from './repoPaths.ts';

/** Options of one agent process (`muster agent --simulate N`). */
export interface AgentProcessOptions {
  /** NATS urls. */
  urls: string[];
  /** Simulated nodes sim-1 … sim-N (members finish after their job's runtimeMs). */
  simulate: number;
  heartbeatMs?: number;
  /** pino level (default info). */
  logLevel?: string;
  /** Output is appended here; default: `agent.log` in a new temporary folder. */
  logFile?: string;
  env?: NodeJS.ProcessEnv;
}

/** A running agent process. */
export type AgentProcess = ManagedProcess;

/** Spawns `muster agent --simulate N` as its own process (the built command line). */
export function spawnAgent(opts: AgentProcessOptions): AgentProcess {
  const args = ['--enable-source-maps', cliEntry(), 'agent', '--simulate', String(opts.simulate), '--nats', opts.urls.join(','), '--log-level', opts.logLevel ?? 'info'];
  if (opts.heartbeatMs !== undefined) args.push('--heartbeat-ms', String(opts.heartbeatMs));
  const logFile = opts.logFile ?? join(newDataDir(undefined, 'muster-agent-'), 'agent.log');
  return spawnManaged({ name: `agent ×${opts.simulate}`, command: process.execPath, args, logFile, cwd: REPO_ROOT, ...(opts.env === undefined ? {} : { env: opts.env }) });
}
