// The committed deployment configuration (deploy/nats/) read by tests, and the same cluster started
// from it with local nats-server processes: only listen addresses and the JetStream store folder
// are rewritten (to free loopback ports and temporary folders); users, permissions and cluster
// settings stay exactly as committed.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { freePort, natsServerBinary } from './natsServer.ts';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The folder of the committed NATS configuration. */
export const DEPLOY_NATS_DIR = join(REPO_ROOT, 'deploy', 'nats');
/** The server configuration every cluster node runs. */
export const NATS_CONF = join(DEPLOY_NATS_DIR, 'nats.conf');

/** Where a committed server configuration listens and stores, as written in the file. */
export interface NatsConfigLayout {
  /** Top-level `listen` (clients), e.g. `0.0.0.0:4222`. */
  clientListen: string;
  /** `http` (monitoring). */
  monitorListen: string;
  /** `cluster { listen }` (routes). */
  clusterListen: string;
  /** `jetstream { store_dir }`. */
  storeDir: string;
  /** Files named by `include`, relative to the configuration's folder. */
  includes: string[];
}

const LAYOUT_PATTERNS = {
  clientListen: /^listen:\s*(\S+)\s*$/m,
  monitorListen: /^http:\s*(\S+)\s*$/m,
  clusterListen: /^cluster\s*\{[^}]*?^\s+listen:\s*(\S+)\s*$/m,
  storeDir: /^jetstream\s*\{[^}]*?^\s+store_dir:\s*"([^"]+)"\s*$/m,
} as const;

/** Reads the listen addresses, store folder and includes of a server configuration; throws if one is missing. */
export function readNatsConfigLayout(text: string): NatsConfigLayout {
  const value = (key: keyof typeof LAYOUT_PATTERNS): string => {
    const match = LAYOUT_PATTERNS[key].exec(text);
    if (match?.[1] === undefined) throw new Error(`nats config: no ${key} (${LAYOUT_PATTERNS[key].source})`);
    return match[1];
  };
  return {
    clientListen: value('clientListen'),
    monitorListen: value('monitorListen'),
    clusterListen: value('clusterListen'),
    storeDir: value('storeDir'),
    includes: [...text.matchAll(/^include\s+"?([^"\s]+)"?\s*$/gm)].map((m) => m[1] as string),
  };
}

/** The same configuration listening on other addresses and storing in another folder; nothing else changes. */
export function localizeNatsConfig(
  text: string,
  local: { clientListen: string; monitorListen: string; clusterListen: string; storeDir: string },
): string {
  let out = text;
  for (const key of Object.keys(LAYOUT_PATTERNS) as (keyof typeof LAYOUT_PATTERNS)[]) {
    const match = LAYOUT_PATTERNS[key].exec(out);
    if (match?.[1] === undefined) throw new Error(`nats config: no ${key} to rewrite`);
    const line = match[0];
    const replaced = line.slice(0, line.lastIndexOf(match[1])) + local[key] + line.slice(line.lastIndexOf(match[1]) + match[1].length);
    out = out.slice(0, match.index) + replaced + out.slice(match.index + line.length);
  }
  return out;
}

/** Configuration text without comments and quoted strings, where `$NAME` can only be a variable reference. */
function code(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/"(?:[^"\\]|\\.)*"|'[^']*'/g, '""').replace(/(#|\/\/).*$/, ''))
    .join('\n');
}

/** The variables a configuration reads from the server's environment: referenced as `$NAME`, not defined in the file. */
export function configEnvVariables(text: string): string[] {
  const body = code(text);
  const defined = new Set([...body.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*[=:]/gm)].map((m) => m[1] as string));
  const referenced = new Set([...body.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string));
  return [...referenced].filter((name) => !defined.has(name)).sort();
}

/** Each user of an accounts file and the environment variable its password comes from. */
export function configUsers(text: string): Map<string, string> {
  const users = new Map<string, string>();
  for (const m of code(text).matchAll(/user:\s*([A-Za-z0-9_-]+)\s*\n\s*password:\s*(\S+)/g)) {
    const password = m[2] as string;
    if (!password.startsWith('$')) throw new Error(`user ${m[1]}: the password must come from the environment`);
    users.set(m[1] as string, password.slice(1));
  }
  return users;
}

/** A user's credentials and its reply prefix (`_INBOX_<user>`; scheduler and admin keep the default `_INBOX`). */
export interface DeployCredentials {
  user: string;
  pass: string;
  inboxPrefix?: string;
}

/** One node of a cluster started from the committed configuration. */
export interface DeployedNode {
  name: string;
  url: string;
  monitorUrl: string;
  /** The route port, for tests of who may join. */
  clusterPort: number;
  /** Stops this node (SIGTERM, then SIGKILL) and awaits its exit; its folder stays until the cluster stops. */
  stop(): Promise<void>;
  /** The server's log so far. */
  log(): string;
}

/** A cluster started from deploy/nats with local processes. */
export interface DeployedCluster {
  urls: string[];
  nodes: DeployedNode[];
  credentials(user: string): DeployCredentials;
  /** A connection of `user` to the whole cluster through @muster/bus (failing over between nodes); the caller closes it. */
  connectAs(user: string, opts?: { inboxPrefix?: string }): Promise<Bus>;
  /** Stops every node (SIGTERM, then SIGKILL), awaits their exit and removes their folders. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  // a crashed test run must not leave servers behind
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Starts the deployment's NATS cluster (deploy/nats/nats.conf on `size` nodes, 3 by default) on
 * free loopback ports with temporary store folders and waits until, on every node, the routes are up
 * and JetStream has a meta leader and all `size` peers.
 */
export async function startDeployedCluster(size = 3): Promise<DeployedCluster> {
  const confText = readFileSync(NATS_CONF, 'utf8');
  const layout = readNatsConfigLayout(confText);
  const accountsText = layout.includes.map((file) => readFileSync(join(DEPLOY_NATS_DIR, file), 'utf8')).join('\n');
  const users = configUsers(accountsText);
  const nodes: { name: string; port: number; monitorPort: number; clusterPort: number; dir: string }[] = [];
  for (let i = 1; i <= size; i++) {
    nodes.push({
      name: `nats-${i}`,
      port: await freePort(),
      monitorPort: await freePort(),
      clusterPort: await freePort(),
      dir: mkdtempSync(join(tmpdir(), `muster-deploy-nats-${i}-`)),
    });
  }
  // digits first on purpose: nats-server parses a variable's value as configuration, so the
  // deployment quotes every value (docker-compose.yml does the same), or `7e3…` would not be a string
  const secret = (): string => `7${randomBytes(12).toString('hex')}`;
  const routePassword = secret();
  const passwords = new Map([...users.values()].map((variable) => [variable, secret()]));
  const env: Record<string, string> = {
    NATS_ROUTE_PASSWORD: `"${routePassword}"`,
    NATS_ROUTES: `[${nodes.map((n) => `"nats-route://route:${routePassword}@127.0.0.1:${n.clusterPort}"`).join(', ')}]`,
    ...Object.fromEntries([...passwords].map(([variable, password]) => [variable, `"${password}"`])),
  };

  const procs: { proc: ChildProcess; exited: Promise<void> }[] = [];
  const stopProcess = async ({ proc, exited }: { proc: ChildProcess; exited: Promise<void> }): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map(stopProcess));
    for (const n of nodes) rmSync(n.dir, { recursive: true, force: true });
  };
  const logPath = (dir: string): string => join(dir, 'nats.log');
  const readLog = (dir: string): string => {
    try {
      return readFileSync(logPath(dir), 'utf8');
    } catch {
      return '';
    }
  };

  try {
    for (const n of nodes) {
      writeFileSync(
        join(n.dir, 'nats.conf'),
        localizeNatsConfig(confText, {
          clientListen: `127.0.0.1:${n.port}`,
          monitorListen: `127.0.0.1:${n.monitorPort}`,
          clusterListen: `127.0.0.1:${n.clusterPort}`,
          storeDir: join(n.dir, 'jetstream'),
        }),
      );
      for (const file of layout.includes) writeFileSync(join(n.dir, file), readFileSync(join(DEPLOY_NATS_DIR, file)));
      const out = createWriteStream(logPath(n.dir));
      // only what the configuration reads: nothing leaks in from the test's environment
      const proc = spawn(natsServerBinary(), ['-c', join(n.dir, 'nats.conf')], {
        env: { ...env, NATS_SERVER_NAME: n.name },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      proc.stdout?.pipe(out, { end: false });
      proc.stderr?.pipe(out, { end: false });
      live.add(proc);
      // 'close' comes after the output pipes end; ending the log then makes it complete when a start-up fails
      const exited = new Promise<void>((resolve) => proc.once('close', () => out.end(() => resolve())));
      void exited.then(() => live.delete(proc));
      proc.once('error', (err) => out.write(`spawn error: ${err.message}\n`));
      procs.push({ proc, exited });
    }
    await Promise.all(
      nodes.map((n, i) => {
        const { proc, exited } = procs[i] as { proc: ChildProcess; exited: Promise<void> };
        return waitClustered(n, size, proc, exited, () => readLog(n.dir));
      }),
    );
  } catch (err) {
    await stop();
    throw err;
  }

  const urls = nodes.map((n) => `nats://127.0.0.1:${n.port}`);
  const credentials = (user: string): DeployCredentials => {
    const variable = users.get(user);
    const pass = variable === undefined ? undefined : passwords.get(variable);
    if (pass === undefined) throw new Error(`no user ${user} in ${layout.includes.join(', ')}`);
    return user === 'admin' || user === 'scheduler' ? { user, pass } : { user, pass, inboxPrefix: `_INBOX_${user}` };
  };
  return {
    urls,
    nodes: nodes.map((n, i) => ({
      name: n.name,
      url: `nats://127.0.0.1:${n.port}`,
      monitorUrl: `http://127.0.0.1:${n.monitorPort}`,
      clusterPort: n.clusterPort,
      stop: () => stopProcess(procs[i] as { proc: ChildProcess; exited: Promise<void> }),
      log: () => readLog(n.dir),
    })),
    credentials,
    connectAs: (user, opts = {}) =>
      connect({ servers: urls, name: `test ${user}`, reconnectTimeWaitMs: 100, ...credentials(user), ...opts }),
    stop,
  };
}

async function waitClustered(
  node: { name: string; monitorPort: number },
  size: number,
  proc: ChildProcess,
  exited: Promise<void>,
  readLog: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not polled yet';
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await exited;
      const status = proc.exitCode ?? proc.signalCode;
      throw new Error(`nats-server ${node.name} exited (${status}) during start-up:\n${readLog().slice(-4000)}`);
    }
    try {
      const base = `http://127.0.0.1:${node.monitorPort}`;
      const routez = (await (await fetch(`${base}/routez`)).json()) as { num_routes?: number };
      const jsz = (await (await fetch(`${base}/jsz`)).json()) as { meta_cluster?: { leader?: string; cluster_size?: number } };
      const meta = jsz.meta_cluster;
      // every other node routed (authenticated), a JetStream meta leader, and every peer in the meta group
      if ((routez.num_routes ?? 0) >= size - 1 && (meta?.leader ?? '') !== '' && (meta?.cluster_size ?? 0) >= size) return;
      last = `routes ${routez.num_routes ?? 0}/${size - 1}, meta leader '${meta?.leader ?? ''}', meta peers ${meta?.cluster_size ?? 0}/${size}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nats-server ${node.name} not clustered after ${timeoutMs} ms (${last}):\n${readLog().slice(-4000)}`);
}
