import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import type { MusterClient } from '@muster/client';
import type { JobSpec, Validated } from '@muster/core';
import { CliError, EXIT } from '../cliError.ts';
import { cores, gib, renderTable } from '../format.ts';
import { followDecisions } from '../liveView.ts';
import { natsTarget, positiveInt, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { readJsonFile } from '../readJsonFile.ts';
import { serviceLogger } from '../serviceLogger.ts';
import { untilStopped } from '../untilStopped.ts';
import { DEFAULT_UI_PORT, portNumber, serveDashboard } from './ui.ts';

interface UpFlags extends NatsFlags {
  nodes: number;
  jobs?: string;
  duration?: number;
  keepData?: boolean;
  dir: string;
  logLevel?: string;
  uiPort?: number;
  ui: boolean;
  metricsPort?: number;
}

/** The metrics port `muster up` prefers (taken: any free port instead). */
const DEFAULT_METRICS_PORT = 9464;

const SAMPLE_WORKLOAD = fileURLToPath(new URL('../../../../examples/workload.json', import.meta.url));

/** `muster up`: the embedded stack (nats-server, a scheduler, simulated agents, a sample workload, a live view). */
export function upCommand(): Command {
  return withNatsOptions(new Command('up'))
    .description('start a local stack: its own nats-server (unless --nats or NATS_URL), a scheduler, simulated agents; submit a sample workload and show live what is placed where; Ctrl-C stops everything')
    .option('--nodes <n>', 'simulated nodes sim-1 … sim-n', positiveInt, 6)
    .option('--jobs <file>', 'the workload to submit: a JobSpec or a JSON array (default: examples/workload.json)')
    .option('--duration <seconds>', 'stop by itself after this many seconds', positiveInt)
    .option('--keep-data', "keep the last run's JetStream data instead of starting afresh")
    .option('--dir <dir>', 'folder for NATS data and logs', '.muster')
    .option('--log-level <level>', 'level of the service logs in <dir>/up.log (default: $LOG_LEVEL or info)')
    .option('--ui-port <port>', `the dashboard's port on 127.0.0.1 (default ${DEFAULT_UI_PORT}, or any free port when taken)`, portNumber)
    .option('--no-ui', 'do not serve the dashboard')
    .option('--metrics-port <port>', `the scheduler's Prometheus metrics port on 127.0.0.1 (default ${DEFAULT_METRICS_PORT}, or any free port when taken; 0: none)`, portNumber)
    .action(async (flags: UpFlags) => {
      await up(flags);
    });
}

async function up(flags: UpFlags): Promise<void> {
  // loaded here, so the other subcommands start fast and do not depend on the services' code
  const [{ simulatedNodes, startAgent }, { startScheduler }, { connectClient }, { validateJobSpec }, { NatsServerMissingError, freePort, natsServerBinary, startNatsServer }] = await Promise.all([
    import('@muster/agent'),
    import('@muster/scheduler'),
    import('@muster/client'),
    import('@muster/core'),
    import('@muster/stack'),
  ]);
  const workloadFile = flags.jobs ?? SAMPLE_WORKLOAD;
  const workload = readWorkload(workloadFile, validateJobSpec);
  const print = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  const external = flags.nats ?? process.env.NATS_URL;
  if (external === undefined) {
    // before anything starts: where nats-server is missing, say how to install it
    try {
      natsServerBinary();
    } catch (err) {
      if (!(err instanceof NatsServerMissingError)) throw err;
      throw new CliError(EXIT.unreachable, 'nats-server-missing', `${err.message}, or point --nats/NATS_URL at a running server`);
    }
  }
  mkdirSync(flags.dir, { recursive: true });
  const logFile = join(flags.dir, 'up.log');
  // synchronous writes: nothing to flush when stopping, even after a failed start
  const logger = await serviceLogger(flags.logLevel, logFile);
  // Ctrl-C from the first moment on: whatever has started by then is stopped, in reverse order
  const timeUp = new AbortController();
  let interrupted = false;
  const stopRequested = untilStopped(timeUp.signal).then(() => {
    interrupted = true;
  });
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((err: unknown) => logger.error({ err }, 'stopping'));
  };
  try {
    let target = natsTarget(flags);
    if (external === undefined) {
      // libs/stack's launcher, on a folder of our own that outlives the run (--keep-data reuses it)
      const dataDir = join(flags.dir, 'nats');
      if (flags.keepData !== true) rmSync(dataDir, { recursive: true, force: true });
      const server = await startNatsServer({ dataDir, serverName: 'muster-up' }).catch((err: unknown) => {
        const why = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
        const tail = lastLine(join(dataDir, 'nats.log'));
        throw new CliError(EXIT.unreachable, 'nats-server-failed', `${why}${tail === '' ? '' : `: ${tail}`} (see ${join(dataDir, 'nats.log')})`, { cause: err });
      });
      cleanups.push(() => server.stop());
      target = { ...target, servers: [server.url] };
      print(`nats-server  ${server.url}  (JetStream data in ${relative('.', dataDir) || '.'})`);
    } else {
      print(`nats         ${target.servers.join(',')}`);
    }
    const auth = target.auth.user === undefined ? {} : { user: target.auth.user, pass: target.auth.pass ?? '' };
    // the preferred metrics port, or a free one when another stack holds it (0: no metrics)
    const metricsPort = flags.metricsPort ?? ((await portIsFree(DEFAULT_METRICS_PORT)) ? DEFAULT_METRICS_PORT : await freePort());
    const scheduler = await startScheduler({ natsUrl: target.servers, id: 'up', logger, heartbeatTimeoutMs: 5_000, metricsPort, ...auth });
    cleanups.push(scheduler.stop);
    await until(() => scheduler.role() === 'leader', 15_000, 'the scheduler did not become leader');
    print(`scheduler    up (leader)`);
    if (scheduler.metricsUrl !== null) print(`metrics      ${scheduler.metricsUrl}`);
    if (flags.ui) {
      const { connect } = await import('@muster/bus');
      const uiBus = await connect({ servers: target.servers, name: 'muster-up-ui', ...target.auth });
      cleanups.push(() => uiBus.close());
      const dashboard = await serveDashboard(uiBus, '127.0.0.1', flags.uiPort, (err) => logger.warn({ err, component: 'ui' }, 'dashboard: reading the log failed, retrying'));
      cleanups.push(() => dashboard.close());
      print(`dashboard    ${dashboard.url}`);
    }

    const nodes = simulatedNodes(flags.nodes);
    const agent = await startAgent({ natsUrl: target.servers, nodes, simulate: true, heartbeatMs: 1_000, logger, ...target.auth });
    cleanups.push(agent.stop);
    const client = await connectClient(target.servers, { ...target.auth, name: 'muster-up', timeoutMs: target.timeoutMs });
    cleanups.push(() => client.disconnect());
    await until(async () => (await client.nodes().catch(() => [])).filter((n) => n.status === 'up').length >= nodes.length, 15_000, 'the simulated nodes did not register');
    print(`agents       ${nodes.length} simulated nodes: ${nodes.map((n) => n.id).join(' ')}`);
    print(`logs         ${logFile}`);
    print(`try          npx muster jobs --nats ${target.servers[0]}   ·   npx muster explain <job> --nats ${target.servers[0]}`);
    print(flags.duration === undefined ? 'Ctrl-C stops everything.' : `stopping after ${flags.duration} s (or Ctrl-C).`);
    print('');

    const live = new AbortController();
    const following = followDecisions(client, { signal: live.signal, print });
    cleanups.push(async () => {
      live.abort();
      await following.catch(() => undefined);
    });
    for (const spec of workload) {
      if (interrupted) break;
      await submitOne(client, spec, print);
    }

    const handle = flags.duration === undefined ? undefined : setTimeout(() => timeUp.abort(), flags.duration * 1000);
    await stopRequested;
    clearTimeout(handle);
    live.abort();
    const counts = await following.catch(() => ({ placed: 0, waiting: 0, aborted: 0, resized: 0 }));
    print('');
    print(`${counts.placed} placements, ${counts.waiting} waits, ${counts.aborted} final aborts${counts.resized === 0 ? '' : `, ${counts.resized} resizes`}`);
    await printSummary(client, print);
  } finally {
    await stopAll();
  }
  print('stopped');
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

function lastLine(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').pop() ?? '';
  } catch {
    return '';
  }
}

function readWorkload(file: string, validateJobSpec: (input: unknown) => Validated<JobSpec>): unknown[] {
  const content = readJsonFile(file);
  const specs: unknown[] = Array.isArray(content) ? content : [content];
  specs.forEach((spec, i) => {
    const valid = validateJobSpec(spec);
    if (!valid.ok) throw new CliError(EXIT.usage, 'invalid', `${file}${Array.isArray(content) ? `[${i}]` : ''}: ${valid.error.message}`);
  });
  return specs;
}

async function submitOne(client: MusterClient, spec: unknown, print: (line: string) => void): Promise<void> {
  const { isMusterError } = await import('@muster/client');
  try {
    const { jobId } = await client.submit(spec);
    print(`submitted ${jobId}`);
  } catch (err) {
    if (!isMusterError(err) || err.code === 'unavailable' || err.code === 'timeout') throw err;
    print(`rejected  ${(spec as { id?: unknown }).id}: ${err.message}`);
  }
}

async function printSummary(client: MusterClient, print: (line: string) => void): Promise<void> {
  const [jobs, nodes] = await Promise.all([client.jobs(), client.nodes()]);
  print('');
  print(renderTable(['JOB', 'STATUS', 'USER', 'MEMBERS', 'NODES', 'REASON'], jobs.map((j) => [j.id, j.status, j.user, String(j.members), j.nodes.join(',') || '-', j.reason ?? '-'])));
  print('');
  print(
    renderTable(
      ['NODE', 'STATUS', 'CPU', 'MEM GiB', 'GPUS', 'JOBS'],
      nodes.map((n) => [n.id, n.status, `${cores(n.cpu.used)}/${cores(n.cpu.total)}`, `${gib(n.memoryMb.used)}/${gib(n.memoryMb.total)}`, `${n.gpus.used}/${n.gpus.total}`, n.jobs.join(',') || '-']),
    ),
  );
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, failure: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new CliError(EXIT.unreachable, 'not-ready', failure);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
