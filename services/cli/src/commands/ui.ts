import { Command, InvalidArgumentError } from 'commander';
import type { Bus } from '@muster/bus';
import type { Dashboard } from '@muster/ui';
import { CliError, EXIT } from '../cliError.ts';
import { natsTarget, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { untilStopped } from '../untilStopped.ts';

interface UiFlags extends NatsFlags {
  port?: number;
  host: string;
}

/** The dashboard's port when none is given (taken: any free port instead). */
export const DEFAULT_UI_PORT = 7070;

/** Parses a TCP port flag (0: any free port). */
export function portNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number, 0 to 65535');
  return n;
}

/** `muster ui`: serves the web dashboard on loopback until Ctrl-C. */
export function uiCommand(): Command {
  return withNatsOptions(new Command('ui'))
    .description(`serve the web dashboard (cluster, queue, job stories, replicas, live decisions) on http://127.0.0.1:${DEFAULT_UI_PORT}/ until interrupted; it reads the scheduler's API and the log`)
    .option('--port <port>', `port (default ${DEFAULT_UI_PORT}, or any free port when that one is taken; 0: any free port)`, portNumber)
    .option('--host <address>', 'address to bind; anything but loopback exposes the dashboard without authentication (see docs/dashboard.md)', '127.0.0.1')
    .action(async (flags: UiFlags) => {
      const { connect } = await import('@muster/bus');
      const target = natsTarget(flags);
      let bus: Bus;
      try {
        bus = await connect({ servers: target.servers, name: 'muster-ui', connectTimeoutMs: target.timeoutMs, timeoutMs: target.timeoutMs, ...target.auth });
      } catch (err) {
        throw new CliError(EXIT.unreachable, 'unreachable', `cannot reach NATS at ${target.servers.join(',')}: ${(err as Error).message}`, { cause: err });
      }
      const stopRequested = untilStopped();
      let dashboard: Dashboard;
      try {
        dashboard = await serveDashboard(bus, flags.host, flags.port);
      } catch (err) {
        await bus.close();
        throw err;
      }
      process.stdout.write(`dashboard    ${dashboard.url}\n`);
      await stopRequested;
      await dashboard.close();
      await bus.drain().catch(() => bus.close());
    });
}

/**
 * Starts the dashboard on `host:port`; with no port given, on the default one, or any free port
 * when that is taken (so a second `muster up` still starts). A bad address or a taken port that
 * was asked for is a usage error.
 */
export async function serveDashboard(bus: Bus, host: string, port: number | undefined, onError?: (err: unknown) => void): Promise<Dashboard> {
  const { startDashboard } = await import('@muster/ui');
  const start = (p: number): Promise<Dashboard> => startDashboard({ bus, host, port: p, ...(onError === undefined ? {} : { onError }) });
  try {
    return await start(port ?? DEFAULT_UI_PORT);
  } catch (err) {
    if (port === undefined && (err as { code?: string }).code === 'EADDRINUSE') return start(0);
    throw new CliError(EXIT.usage, 'cannot-listen', `the dashboard cannot listen on ${host}:${port ?? DEFAULT_UI_PORT}: ${(err as Error).message}`, { cause: err });
  }
}
