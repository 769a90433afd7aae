// Real nats-server processes for tests: each one on free loopback ports with its own temporary
// data folder, stopped and removed after. Never the system server on 4222.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** Options for one test server. */
export interface NatsServerOptions {
  /** Extra configuration appended verbatim to the generated config file (accounts, permissions). */
  extraConfig?: string;
  /** Milliseconds to wait for the server to become healthy. */
  startTimeoutMs?: number;
}

/** A running test nats-server. */
export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  port: number;
  monitorPort: number;
  /** The folder that holds the config, the log and the JetStream store; removed by `stop()`. */
  dataDir: string;
  /** The JetStream store folder, kept across `restart()`. */
  storeDir: string;
  /** Process id of the current server process (changes on restart). */
  readonly pid: number;
  /** Whether the current process is still running. */
  readonly running: boolean;
  /** Stops the server (SIGTERM, then SIGKILL), awaits its exit and removes its data folder. */
  stop(): Promise<void>;
  /** Sends a signal (SIGKILL by default) and awaits the exit; the data folder is kept. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Stops the process if it runs and starts it again on the same ports and data. */
  restart(): Promise<void>;
  /** The server's log so far. */
  log(): string;
}

/** A running three-node (or n-node) test cluster. */
export interface NatsClusterHandle {
  /** Client urls of every node, for `connect({servers})`. */
  urls: string[];
  nodes: NatsServerHandle[];
  /** Stops every node and removes their folders. */
  stop(): Promise<void>;
}

/** Thrown when no nats-server binary can be found. */
export class NatsServerMissingError extends Error {
  readonly code = 'NATS_SERVER_MISSING';
  constructor() {
    super(
      'nats-server not found: install it (Debian/Ubuntu: `sudo apt-get install nats-server`), ' +
        'put it on PATH, or set NATS_SERVER_BIN to its path',
    );
  }
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  // a crashed test run must not leave servers behind
  for (const child of live) child.kill('SIGKILL');
});

/** The nats-server binary: NATS_SERVER_BIN, /usr/sbin/nats-server, or the first on PATH. */
export function natsServerBinary(): string {
  const candidates = [
    process.env['NATS_SERVER_BIN'],
    '/usr/sbin/nats-server',
    ...(process.env['PATH'] ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'nats-server')),
  ];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === '') continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here: try the next place
    }
  }
  throw new NatsServerMissingError();
}

/** A free TCP port on loopback, found by binding port 0. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the bound port'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

interface ServerLayout {
  name: string;
  port: number;
  monitorPort: number;
  dataDir: string;
  storeDir: string;
  config: string;
}

/** Starts one JetStream-enabled nats-server on free loopback ports with its own data folder. */
export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const [port, monitorPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'muster-nats-'));
  const storeDir = join(dataDir, 'jetstream');
  const config = [
    'server_name: muster-test',
    `listen: "127.0.0.1:${port}"`,
    `http: "127.0.0.1:${monitorPort}"`,
    `jetstream { store_dir: "${storeDir}" }`,
    opts.extraConfig ?? '',
  ].join('\n');
  const handle = createHandle({ name: 'muster-test', port, monitorPort, dataDir, storeDir, config });
  try {
    await handle.start(opts.startTimeoutMs ?? 15_000, false);
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

/** Starts `size` (3 by default) clustered nats-servers on loopback and waits for a JetStream meta leader. */
export async function startNatsCluster(size = 3, opts: NatsServerOptions = {}): Promise<NatsClusterHandle> {
  const clusterName = `muster-test-${process.pid}-${Date.now().toString(36)}`;
  const layouts: { name: string; port: number; monitorPort: number; clusterPort: number; dataDir: string }[] = [];
  for (let i = 1; i <= size; i++) {
    layouts.push({
      name: `n${i}`,
      port: await freePort(),
      monitorPort: await freePort(),
      clusterPort: await freePort(),
      dataDir: mkdtempSync(join(tmpdir(), `muster-nats-n${i}-`)),
    });
  }
  const routes = layouts.map((l) => `"nats-route://127.0.0.1:${l.clusterPort}"`).join(', ');
  const handles = layouts.map((l) => {
    const storeDir = join(l.dataDir, 'jetstream');
    const config = [
      `server_name: ${l.name}`,
      `listen: "127.0.0.1:${l.port}"`,
      `http: "127.0.0.1:${l.monitorPort}"`,
      `jetstream { store_dir: "${storeDir}" }`,
      `cluster { name: "${clusterName}", listen: "127.0.0.1:${l.clusterPort}", routes: [${routes}] }`,
      opts.extraConfig ?? '',
    ].join('\n');
    return createHandle({ name: l.name, port: l.port, monitorPort: l.monitorPort, dataDir: l.dataDir, storeDir, config });
  });
  const stop = async (): Promise<void> => {
    await Promise.all(handles.map((h) => h.stop()));
  };
  try {
    await Promise.all(handles.map((h) => h.start(opts.startTimeoutMs ?? 30_000, true)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls: handles.map((h) => h.url), nodes: handles, stop };
}

interface InternalHandle extends NatsServerHandle {
  start(timeoutMs: number, clustered: boolean): Promise<void>;
}

function createHandle(layout: ServerLayout): InternalHandle {
  const configPath = join(layout.dataDir, 'nats.conf');
  const logPath = join(layout.dataDir, 'nats.log');
  writeFileSync(configPath, layout.config);
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let clustered = false;
  let removed = false;

  const spawnServer = async (): Promise<void> => {
    await mkdir(layout.storeDir, { recursive: true });
    const out = createWriteStream(logPath, { flags: 'a' });
    const proc = spawn(natsServerBinary(), ['-c', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc.stdout?.pipe(out);
    proc.stderr?.pipe(out);
    live.add(proc);
    exited = new Promise((resolve) => {
      proc.once('exit', () => {
        live.delete(proc);
        resolve();
      });
    });
    proc.once('error', (err) => out.write(`spawn error: ${err.message}\n`));
    child = proc;
  };

  const readLog = (): string => {
    try {
      return readFileSync(logPath, 'utf8');
    } catch {
      return '';
    }
  };

  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const proc = child;
    if (proc === null || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  const handle: InternalHandle = {
    url: `nats://127.0.0.1:${layout.port}`,
    port: layout.port,
    monitorPort: layout.monitorPort,
    dataDir: layout.dataDir,
    storeDir: layout.storeDir,
    get pid(): number {
      return child?.pid ?? -1;
    },
    get running(): boolean {
      return child !== null && child.exitCode === null && child.signalCode === null;
    },
    log: readLog,
    kill,
    async start(timeoutMs: number, isClustered: boolean): Promise<void> {
      clustered = isClustered;
      await spawnServer();
      await waitHealthy(layout, () => handle.running, clustered, timeoutMs, readLog);
    },
    async restart(): Promise<void> {
      await kill('SIGTERM');
      await spawnServer();
      await waitHealthy(layout, () => handle.running, clustered, 30_000, readLog);
    },
    async stop(): Promise<void> {
      await kill('SIGTERM');
      if (!removed) {
        removed = true;
        rmSync(layout.dataDir, { recursive: true, force: true });
      }
    },
  };
  return handle;
}

async function waitHealthy(
  layout: ServerLayout,
  running: () => boolean,
  clustered: boolean,
  timeoutMs: number,
  readLog: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not polled yet';
  while (Date.now() < deadline) {
    if (!running()) {
      throw new Error(`nats-server ${layout.name} exited during start-up:\n${readLog().slice(-4000)}`);
    }
    try {
      // a clustered node is ready for tests once JetStream has a meta leader
      const path = clustered ? '/jsz' : '/healthz?js-enabled-only=true';
      const res = await fetch(`http://127.0.0.1:${layout.monitorPort}${path}`);
      if (res.ok) {
        if (!clustered) return;
        const jsz = (await res.json()) as { meta_cluster?: { leader?: string } };
        const leader = jsz.meta_cluster?.leader;
        if (typeof leader === 'string' && leader !== '') return;
        last = 'no JetStream meta leader yet';
      } else {
        last = `HTTP ${res.status}`;
      }
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nats-server ${layout.name} not ready after ${timeoutMs} ms (${last}):\n${readLog().slice(-4000)}`);
}
