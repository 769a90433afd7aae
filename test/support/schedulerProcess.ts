// Scheduler replicas as real processes for tests that kill -9 or SIGSTOP them.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@muster/bus';

const ENTRY = new URL('../../services/scheduler/src/main.ts', import.meta.url).pathname;
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Options for one replica process. */
export interface SchedulerProcessOptions {
  id: string;
  urls: string[];
  leaseMs?: number;
  heartbeatTimeoutMs?: number;
  checkpointEvery?: number;
  snapshotEvery?: number;
  replicas?: number;
}

/** A running replica process. */
export interface SchedulerProcess {
  id: string;
  readonly pid: number;
  signal(sig: NodeJS.Signals): void;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM and wait for a clean exit (SIGKILL after `ms`). */
  stop(ms?: number): Promise<number | null>;
  log(): string;
}

/** What `muster.replica.<id>.status` answers. */
export interface ReplicaStatus {
  id: string;
  role: string;
  seq: number;
  term: number;
  lastInputSeq: number;
  stateHash: string;
  refusedBecause: string | null;
}

/** Spawns `services/scheduler/src/main.ts` (the same replica `muster scheduler` runs) under tsx. */
export function spawnScheduler(opts: SchedulerProcessOptions): SchedulerProcess {
  const dir = mkdtempSync(join(tmpdir(), `muster-sched-${opts.id}-`));
  const logPath = join(dir, 'scheduler.log');
  const args = ['--import', 'tsx', ENTRY, '--id', opts.id, '--nats', opts.urls.join(','), '--log-level', 'debug'];
  const flag = (name: string, v: number | undefined): void => {
    if (v !== undefined) args.push(`--${name}`, String(v));
  };
  flag('lease-ms', opts.leaseMs);
  flag('heartbeat-timeout-ms', opts.heartbeatTimeoutMs ?? 0);
  flag('checkpoint-every', opts.checkpointEvery);
  flag('snapshot-every', opts.snapshotEvery);
  flag('replicas', opts.replicas);
  const out = createWriteStream(logPath);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  live.add(child);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      live.delete(child);
      resolve(code);
    });
  });
  return {
    id: opts.id,
    get pid() {
      return child.pid ?? -1;
    },
    signal: (sig) => child.kill(sig),
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop(ms = 10_000) {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    log: () => readFileSync(logPath, 'utf8'),
  };
}

/** Asks one replica where it is; null when it does not answer in time. */
export async function replicaStatus(nc: NatsConnection, id: string, timeoutMs = 1000): Promise<ReplicaStatus | null> {
  try {
    const reply = await nc.request(`muster.replica.${id}.status`, '', { timeout: timeoutMs });
    return JSON.parse(reply.string()) as ReplicaStatus;
  } catch {
    return null;
  }
}

/** Polls until `check` returns a value (not null/false) or the time runs out; a throw counts as not yet. */
export async function eventually<T>(check: () => Promise<T | null | false> | T | null | false, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== null && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError === null ? '' : `: ${String(lastError)}`}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
