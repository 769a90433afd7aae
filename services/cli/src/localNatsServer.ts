import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, mkdirSync, openSync, readFileSync } from 'node:fs';
import { freePort } from '@muster/stack';
import { delimiter, join, resolve as resolvePath } from 'node:path';
import { CliError, EXIT } from './cliError.ts';

/** A nats-server that `muster up` started and will stop. */
export interface LocalNatsServer {
  url: string;
  /** SIGTERM, then SIGKILL after 10 s; resolves when it has exited. */
  stop(): Promise<void>;
}

/** How to install nats-server where it is missing (Debian and Ubuntu). */
export const INSTALL_NATS = 'apt-get update && apt-get install -y nats-server';

/**
 * The nats-server binary: `NATS_SERVER_BIN` when set (and then only it), otherwise the first on
 * PATH or /usr/sbin/nats-server (Debian's package puts it there); null if there is none.
 */
export function findNatsServer(env: NodeJS.ProcessEnv = process.env): string | null {
  const explicit = env.NATS_SERVER_BIN;
  const candidates =
    explicit !== undefined && explicit !== ''
      ? [explicit]
      : [...(env.PATH ?? '').split(delimiter).filter((dir) => dir !== '').map((dir) => join(dir, 'nats-server')), '/usr/sbin/nats-server'];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here: try the next place
    }
  }
  return null;
}

/**
 * Starts nats-server with JetStream on free loopback ports, its store in `dataDir`, its output in
 * `logFile`, and waits until JetStream is ready; exit code 3 if it does not come up.
 */
export async function startLocalNatsServer(opts: { binary: string; dataDir: string; logFile: string; timeoutMs?: number }): Promise<LocalNatsServer> {
  const [port, monitorPort] = [await freePort(), await freePort()];
  mkdirSync(opts.dataDir, { recursive: true });
  const log = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      opts.binary,
      ['--jetstream', '--store_dir', resolvePath(opts.dataDir), '--addr', '127.0.0.1', '--port', String(port), '--http_port', String(monitorPort), '--server_name', 'muster-up'],
      // a group of its own: Ctrl-C in the terminal reaches the command line, which stops the server last
      { stdio: ['ignore', log, log], detached: true },
    );
  } finally {
    closeSync(log);
  }
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  // a crash of the command line must not leave the server behind
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const stop = async (): Promise<void> => {
    process.off('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    try {
      const res = await fetch(`http://127.0.0.1:${monitorPort}/healthz?js-enabled-only=true`);
      if (res.ok) return { url: `nats://127.0.0.1:${port}`, stop };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stop();
  const tail = lastLine(opts.logFile);
  throw new CliError(EXIT.unreachable, 'nats-server-failed', `nats-server did not start${tail === '' ? '' : `: ${tail}`} (see ${opts.logFile})`);
}

function lastLine(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').pop() ?? '';
  } catch {
    return '';
  }
}
