// docker-compose.yml cannot run here (no Docker engine): these tests read it as Compose would
// (YAML merge keys, ${VAR} interpolation from the .env that deploy/make-env.sh writes) and check it
// against the committed NATS configuration, which the real nats-server binary validates.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { validateNodeSpec } from '@muster/core';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  DEPLOY_NATS_DIR,
  NATS_CONF,
  REPO_ROOT,
  configEnvVariables,
  configUsers,
  readNatsConfigLayout,
} from '../support/natsConfig.ts';
import { natsServerBinary } from '../support/natsServer.ts';

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const composeText = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
const natsConfText = readFileSync(NATS_CONF, 'utf8');
const layout = readNatsConfigLayout(natsConfText);
const accountsText = layout.includes.map((file) => readFileSync(join(DEPLOY_NATS_DIR, file), 'utf8')).join('\n');
const users = configUsers(accountsText);

/** Compose's variable interpolation: `${NAME}`, `${NAME:?message}`, `${NAME:-default}`, `$$`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([?-])((?:[^}])*))?\}/g, (whole, name?: string, op?: string, arg?: string) => {
    if (whole === '$$') return '$';
    const set = name !== undefined ? vars[name] : undefined;
    if (set !== undefined && set !== '') return set;
    if (op === '-') return arg ?? '';
    if (op === '?') throw new Error(`required variable ${name} is missing: ${arg}`);
    return '';
  });
}

function interpolateDeep<T>(value: T, vars: Record<string, string>): T {
  if (typeof value === 'string') return interpolate(value, vars) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => interpolateDeep(v, vars)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateDeep(v, vars)])) as T;
  }
  return value;
}

/** The .env deploy/make-env.sh prints, as a map. */
function makeEnv(): Record<string, string> {
  const run = spawnSync('sh', [join(REPO_ROOT, 'deploy', 'make-env.sh')], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return Object.fromEntries(run.stdout.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
}

const raw = parse(composeText, { merge: true }) as ComposeFile;
const envFile = makeEnv();
const compose = interpolateDeep(raw, envFile);
const services = Object.entries(compose.services);
const natsServices = services.filter(([, s]) => s.image?.startsWith('nats:') === true);
const musterServices = services.filter(([, s]) => s.build !== undefined);

/** The repository file a container path comes from, through the service's bind mounts (or the image's /app). */
function hostPath(service: ComposeService, containerPath: string): string {
  for (const volume of service.volumes ?? []) {
    const [source, target] = volume.split(':') as [string, string];
    if (source.startsWith('./') && (containerPath === target || containerPath.startsWith(`${target}/`))) {
      return join(REPO_ROOT, source, posix.relative(target, containerPath));
    }
  }
  // deploy/Dockerfile copies the repository to /app
  if (containerPath.startsWith('/app/')) return join(REPO_ROOT, containerPath.slice('/app/'.length));
  throw new Error(`${containerPath} is neither mounted nor in the image`);
}

const port = (listen: string): string => listen.slice(listen.lastIndexOf(':') + 1);
/** nats-server reads an environment variable's value as configuration: `"x"` is the string x. */
const unquote = (value: string): string => JSON.parse(value) as string;

describe('docker-compose.yml', () => {
  it('runs three nodes of the official nats:2.9.10 image, all on the committed configuration', () => {
    expect(natsServices.map(([name]) => name).sort()).toEqual(['nats-1', 'nats-2', 'nats-3']);
    for (const [, service] of natsServices) {
      expect(service.image).toBe('nats:2.9.10');
      const [flag, configPath] = service.command ?? [];
      expect(flag).toBe('--config');
      expect(relative(REPO_ROOT, hostPath(service, configPath ?? ''))).toBe(relative(REPO_ROOT, NATS_CONF));
    }
  });

  it('gives every node the environment its configuration reads, and nats-server accepts the result', () => {
    const needed = configEnvVariables([natsConfText, accountsText].join('\n'));
    expect(needed).toContain('NATS_ROUTES');
    for (const [name, service] of natsServices) {
      const env = service.environment ?? {};
      expect(Object.keys(env).sort(), name).toEqual(needed);
      // the real binary parses the real files with exactly this environment (passwords included)
      const check = spawnSync(natsServerBinary(), ['-c', NATS_CONF, '-t'], { env, encoding: 'utf8' });
      expect(`${check.stdout}${check.stderr}`, name).toMatch(/configuration file .* is valid/);
      expect(check.status, name).toBe(0);
    }
  });

  it('keeps passwords that look like numbers or booleans strings for nats-server', () => {
    // make-env.sh writes hex, which may start with digits; an operator may choose anything
    const tricky = Object.fromEntries(Object.keys(envFile).map((name) => [name, name === 'NATS_ROUTE_PASSWORD' ? '1e10' : 'no']));
    const env = interpolateDeep(raw, tricky).services['nats-1']?.environment ?? {};
    const check = spawnSync(natsServerBinary(), ['-c', NATS_CONF, '-t'], { env, encoding: 'utf8' });
    expect(`${check.stdout}${check.stderr}`).toMatch(/configuration file .* is valid/);
  });

  it('routes every node to every node by service name on the cluster port, with the route credentials', () => {
    const names = natsServices.map(([name]) => name).sort();
    const clusterPort = port(layout.clusterListen);
    const routeUser = /cluster\s*\{[\s\S]*?authorization\s*\{\s*user:\s*(\S+)/.exec(natsConfText)?.[1];
    expect(routeUser).toBeDefined();
    for (const [name, service] of natsServices) {
      const env = service.environment ?? {};
      expect(env['NATS_SERVER_NAME']).toBe(name);
      const routes = (env['NATS_ROUTES'] ?? '')
        .replace(/^\[|\]$/g, '')
        .split(',')
        .map((r) => new URL(unquote(r.trim())));
      expect(routes.map((r) => r.hostname).sort()).toEqual(names);
      for (const route of routes) {
        expect(route.protocol).toBe('nats-route:');
        expect(route.port).toBe(clusterPort);
        expect(route.username).toBe(routeUser);
        expect(route.password).toBe(unquote(env['NATS_ROUTE_PASSWORD'] ?? ''));
      }
    }
  });

  it('keeps each node\'s JetStream store on a volume of its own and publishes client ports on loopback only', () => {
    const volumesUsed = new Set<string>();
    for (const [name, service] of natsServices) {
      const dataVolume = (service.volumes ?? [])
        .map((v) => v.split(':') as [string, string])
        .find(([source, target]) => !source.startsWith('.') && (layout.storeDir === target || layout.storeDir.startsWith(`${target}/`)));
      expect(dataVolume, `${name}: ${layout.storeDir} must be on a named volume`).toBeDefined();
      const [volume] = dataVolume ?? [''];
      expect(Object.keys(compose.volumes ?? {})).toContain(volume);
      volumesUsed.add(volume);
      for (const mapping of service.ports ?? []) {
        const [host, , containerPort] = mapping.split(':');
        expect(host, `${name} ${mapping}`).toBe('127.0.0.1');
        expect([port(layout.clientListen), port(layout.monitorListen)]).toContain(containerPort);
      }
    }
    expect(volumesUsed.size).toBe(natsServices.length);
  });

  it('runs three scheduler replicas with distinct ids that create R3 streams', () => {
    const schedulers = musterServices.filter(([, s]) => s.command?.[0] === 'scheduler');
    expect(schedulers).toHaveLength(3);
    const ids = schedulers.map(([, s]) => s.command?.[(s.command?.indexOf('--id') ?? -2) + 1]);
    expect(new Set(ids).size).toBe(3);
    for (const [, s] of schedulers) expect(s.environment?.['MUSTER_REPLICAS']).toBe('3');
  });

  it('runs node agents and simulated agents', () => {
    const agents = musterServices.filter(([, s]) => s.command?.[0] === 'agent');
    expect(agents.some(([, s]) => s.command?.includes('--simulate'))).toBe(true);
    expect(agents.some(([, s]) => s.command?.includes('--node'))).toBe(true);
  });

  it('connects every muster service to all three nodes as the user of its role, with that user\'s password and inbox', () => {
    const clientPort = port(layout.clientListen);
    const natsEnv = natsServices[0]?.[1].environment ?? {};
    for (const [name, service] of musterServices) {
      const env = service.environment ?? {};
      const urls = (env['NATS_URL'] ?? '').split(',').map((u) => new URL(u));
      expect(urls.map((u) => `${u.hostname}:${u.port}`).sort(), name).toEqual(natsServices.map(([n]) => `${n}:${clientPort}`).sort());
      expect([...(service.depends_on ?? [])].sort(), name).toEqual(natsServices.map(([n]) => n).sort());

      const command = service.command ?? [];
      const nodeFile = command.includes('--node') ? command[command.indexOf('--node') + 1] : undefined;
      let role: string;
      if (command[0] === 'scheduler') {
        role = 'scheduler';
      } else if (nodeFile !== undefined) {
        // an agent for one node runs as that node's user: it can report for no other node
        const spec = validateNodeSpec(JSON.parse(readFileSync(hostPath(service, nodeFile), 'utf8')));
        expect(spec.ok, `${name}: ${nodeFile}`).toBe(true);
        role = `agent-${spec.ok ? spec.value.id : ''}`;
      } else {
        expect(command.slice(0, 2)).toEqual(['agent', '--simulate']);
        role = 'simulator';
      }
      expect(env['NATS_USER'], name).toBe(role);
      const passwordVariable = users.get(role);
      expect(passwordVariable, `${name}: user ${role} in accounts.conf`).toBeDefined();
      expect(env['NATS_PASSWORD'], name).toBe(unquote(natsEnv[passwordVariable ?? ''] ?? ''));
      // the scheduler keeps the default _INBOX, which no other role may subscribe to
      expect(env['NATS_INBOX_PREFIX'], name).toBe(role === 'scheduler' ? undefined : `_INBOX_${role}`);
    }
  });

  it('builds the muster image from node:20-bookworm-slim with the muster command as entry point', () => {
    for (const [, service] of musterServices) {
      const dockerfile = join(REPO_ROOT, service.build?.context ?? '', service.build?.dockerfile ?? '');
      expect(existsSync(dockerfile)).toBe(true);
      const text = readFileSync(dockerfile, 'utf8');
      expect(text).toMatch(/^FROM node:20-bookworm-slim$/m);
      expect(text).toMatch(/^RUN npm ci\b/m);
      expect(text).toMatch(/^ENTRYPOINT \["\/app\/node_modules\/\.bin\/muster"\]$/m);
    }
    const cli = JSON.parse(readFileSync(join(REPO_ROOT, 'services', 'cli', 'package.json'), 'utf8')) as { bin?: Record<string, string> };
    expect(cli.bin?.['muster']).toBeDefined();
  });

  it('refuses to start without the secrets, naming the fix', () => {
    expect(() => interpolateDeep(raw, {})).toThrow(/required variable NATS_ROUTE_PASSWORD is missing: run deploy\/make-env.sh/);
  });
});
