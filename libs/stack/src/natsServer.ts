import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './freePort.ts';
import { spawnManaged, within } from './managedProcess.ts';
import type { ManagedProcess } from './managedProcess.ts';
import { natsServerBinary } from './natsServerBinary.ts';
import { waitNatsReady } from './natsReady.ts';

/** Options for one nats-server (or each node of a cluster). */
export interface NatsServerOptions {
  /** Extra configuration appended verbatim to the generated config file (accounts, permissions). */
  extraConfig?: string;
  /** Milliseconds to wait for the server to become ready. */
  startTimeoutMs?: number;
  /** The folder to create the server's data folder in (default: the system's temporary folder). */
  baseDir?: string;
  /** `stop()` removes only the JetStream store and keeps the config and the log. */
  keepLogs?: boolean;
  /**
   * The server's own folder, used as it is (created when missing; made absolute) instead of a new
   * one under `baseDir`: its JetStream store survives `stop()`, so a later server on the same folder
   * (`muster up --keep-data`) finds the same streams. `stop()` then removes nothing.
   */
  dataDir?: string;
  /** The server's name (default `muster-test`). */
  serverName?: string;
}

/** A running nats-server on loopback. */
export interface NatsServerHandle {
  /** The server's name (`muster-test`, or `n1`… in a cluster). */
  name: string;
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  port: number;
  monitorPort: number;
  /** The folder that holds the config, the log (`nats.log`) and the JetStream store; removed by `stop()` unless given as `dataDir`. */
  dataDir: string;
  /** The JetStream store folder, kept across `restart()`. */
  storeDir: string;
  /** Process id of the current server process (changes on restart). */
  readonly pid: number;
  /** Whether the current process is still running. */
  readonly running: boolean;
  /** Stops the server (SIGTERM, then SIGKILL), awaits its exit and removes its data folder. */
  stop(): Promise<void>;
  /** Sends a signal (SIGKILL by default) and awaits the exit (SIGKILL after 10 s); the data folder is kept. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Stops the process if it runs and starts it again on the same ports and data, then waits until ready. */
  restart(): Promise<void>;
  /** The server's log so far. */
  log(): string;
}

/** How one server is laid out on disk and on loopback. */
export interface NatsServerLayout {
  name: string;
  port: number;
  monitorPort: number;
  dataDir: string;
  storeDir: string;
  /** The whole configuration file. */
  config: string;
  /** Cluster peers its routes must reach before it is ready (0 for a single server). */
  peers: number;
}

/** Starts one JetStream-enabled nats-server on free loopback ports with its own data folder. */
export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const [port, monitorPort] = [await freePort(), await freePort()];
  const dataDir = opts.dataDir === undefined ? newDataDir(opts.baseDir, 'muster-nats-') : resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const storeDir = join(dataDir, 'jetstream');
  const name = opts.serverName ?? 'muster-test';
  const config = [
    `server_name: ${name}`,
    `listen: "127.0.0.1:${port}"`,
    `http: "127.0.0.1:${monitorPort}"`,
    `jetstream { store_dir: "${storeDir}" }`,
    opts.extraConfig ?? '',
  ].join('\n');
  const handle = natsServerHandle({ name, port, monitorPort, dataDir, storeDir, config, peers: 0 }, { keepLogs: opts.keepLogs ?? false, keepData: opts.dataDir !== undefined });
  try {
    await handle.start(opts.startTimeoutMs ?? 15_000);
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

/** A fresh data folder under `baseDir` (or the system's temporary folder). */
export function newDataDir(baseDir: string | undefined, prefix: string): string {
  const parent = baseDir ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, prefix));
}

/** A handle that can also be started: for `startNatsServer` and `startNatsCluster`. */
export interface StartableNatsServer extends NatsServerHandle {
  start(timeoutMs: number): Promise<void>;
}

/** The handle of one server laid out as given (not started yet). */
export function natsServerHandle(layout: NatsServerLayout, opts: Pick<NatsServerOptions, 'keepLogs'> & { keepData?: boolean }): StartableNatsServer {
  const configPath = join(layout.dataDir, 'nats.conf');
  const logFile = join(layout.dataDir, 'nats.log');
  writeFileSync(configPath, layout.config);
  let proc: ManagedProcess | null = null;
  let removed = false;

  const spawnServer = (): ManagedProcess => {
    mkdirSync(layout.storeDir, { recursive: true });
    proc = spawnManaged({ name: `nats ${layout.name}`, command: natsServerBinary(), args: ['-c', configPath], logFile });
    return proc;
  };
  const waitReady = (p: ManagedProcess, timeoutMs: number): Promise<void> =>
    waitNatsReady({ name: layout.name, monitorPort: layout.monitorPort, peers: layout.peers, running: () => p.running, log: () => p.log() }, timeoutMs);
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const p = proc;
    if (p === null || !p.running) return;
    if (signal === 'SIGKILL') {
      await p.kill();
      return;
    }
    p.signal(signal);
    if ((await within(p.exited, 10_000)) === null) await p.kill();
  };

  return {
    name: layout.name,
    url: `nats://127.0.0.1:${layout.port}`,
    port: layout.port,
    monitorPort: layout.monitorPort,
    dataDir: layout.dataDir,
    storeDir: layout.storeDir,
    get pid(): number {
      return proc?.pid ?? -1;
    },
    get running(): boolean {
      return proc?.running ?? false;
    },
    log: () => proc?.log() ?? '',
    kill,
    async start(timeoutMs: number): Promise<void> {
      await waitReady(spawnServer(), timeoutMs);
    },
    async restart(): Promise<void> {
      await kill('SIGTERM');
      await waitReady(spawnServer(), 30_000);
    },
    async stop(): Promise<void> {
      await kill('SIGTERM');
      if (removed || opts.keepData === true) return;
      removed = true;
      rmSync(opts.keepLogs === true ? layout.storeDir : layout.dataDir, { recursive: true, force: true });
    },
  };
}
