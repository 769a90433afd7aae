import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnAgent } from './agentProcess.ts';
import type { AgentProcess, AgentProcessOptions } from './agentProcess.ts';
import type { ManagedProcess } from './managedProcess.ts';
import { startNatsCluster } from './natsCluster.ts';
import type { NatsClusterHandle, NatsClusterOptions } from './natsCluster.ts';
import { newDataDir, startNatsServer } from './natsServer.ts';
import type { NatsServerHandle, NatsServerOptions } from './natsServer.ts';
import { spawnScheduler } from './schedulerProcess.ts';
import type { SchedulerProcess, SchedulerProcessOptions } from './schedulerProcess.ts';

/** Options of `createStack`. */
export interface StackOptions {
  /** The folder for every log and store of this stack (created); default: a new temporary folder. */
  dir?: string;
  /** Keep the logs (config files and process output) when the stack stops; stores are removed anyway. */
  keepLogs?: boolean;
  /** Milliseconds each process gets between SIGTERM and SIGKILL when the stack stops (default 5000). */
  graceMs?: number;
}

/** What `stop()` found: processes that had to be killed, and any still alive after that. */
export interface StackStopReport {
  ms: number;
  killed: string[];
  survivors: string[];
}

/** Processes started on loopback that are stopped together, in order, in bounded time. */
export interface Stack {
  /** The folder holding this stack's logs and stores. */
  readonly dir: string;
  /** A single nats-server; its data folder lives in the stack's folder. */
  startNatsServer(opts?: Omit<NatsServerOptions, 'baseDir' | 'keepLogs'>): Promise<NatsServerHandle>;
  /** A cluster of `size` nats-servers; their data folders live in the stack's folder. */
  startNatsCluster(size?: number, opts?: Omit<NatsClusterOptions, 'baseDir' | 'keepLogs'>): Promise<NatsClusterHandle>;
  /** A scheduler replica process, its output appended to `scheduler-<id>.log` (across restarts). */
  spawnScheduler(opts: Omit<SchedulerProcessOptions, 'logFile'>): SchedulerProcess;
  /** An agent process, its output appended to `agent-<n>.log`. */
  spawnAgent(opts: Omit<AgentProcessOptions, 'logFile'>): AgentProcess;
  /** Stops agents, then schedulers, then NATS, each with bounded time; removes the folder unless logs are kept. */
  stop(): Promise<StackStopReport>;
}

/** A new, empty stack. */
export function createStack(opts: StackOptions = {}): Stack {
  const dir = opts.dir ?? newDataDir(undefined, 'muster-stack-');
  mkdirSync(dir, { recursive: true });
  const keepLogs = opts.keepLogs ?? false;
  const graceMs = opts.graceMs ?? 5_000;
  const agents: ManagedProcess[] = [];
  const schedulers: ManagedProcess[] = [];
  const servers: NatsServerHandle[] = [];
  let stopping: Promise<StackStopReport> | null = null;

  const endAll = async (procs: ManagedProcess[], report: StackStopReport): Promise<void> => {
    await Promise.all(
      procs.map(async (p) => {
        if (!p.running) return;
        const exit = await p.terminate(graceMs);
        if (exit === null) report.survivors.push(p.name);
        else if (exit.signal === 'SIGKILL') report.killed.push(p.name);
      }),
    );
  };

  return {
    dir,
    async startNatsServer(serverOpts = {}) {
      const server = await startNatsServer({ ...serverOpts, baseDir: dir, keepLogs });
      servers.push(server);
      return server;
    },
    async startNatsCluster(size = 3, serverOpts = {}) {
      const cluster = await startNatsCluster(size, { ...serverOpts, baseDir: dir, keepLogs });
      servers.push(...cluster.nodes);
      return cluster;
    },
    spawnScheduler(schedulerOpts) {
      const proc = spawnScheduler({ ...schedulerOpts, logFile: join(dir, `scheduler-${schedulerOpts.id}.log`) });
      schedulers.push(proc);
      return proc;
    },
    spawnAgent(agentOpts) {
      const proc = spawnAgent({ ...agentOpts, logFile: join(dir, `agent-${agents.length + 1}.log`) });
      agents.push(proc);
      return proc;
    },
    stop() {
      stopping ??= (async () => {
        const started = Date.now();
        const report: StackStopReport = { ms: 0, killed: [], survivors: [] };
        // clients first, so nothing reconnects to a server that is going away
        await endAll(agents, report);
        await endAll(schedulers, report);
        await Promise.all(servers.map((s) => s.stop()));
        for (const s of servers) if (s.running) report.survivors.push(`nats ${s.name}`);
        if (!keepLogs) rmSync(dir, { recursive: true, force: true });
        report.ms = Date.now() - started;
        return report;
      })();
      return stopping;
    },
  };
}
