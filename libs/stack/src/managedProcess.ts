import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** How a process ended: its exit code or the signal that ended it (both null when it never started). */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (for example ENOENT). */
  error?: string;
}

/** What to run and where its output goes. */
export interface ManagedProcessOptions {
  /** A name for messages (`nats n2`, `scheduler s1`). */
  name: string;
  command: string;
  args: string[];
  /** stdout and stderr are appended here (the folder is created). */
  logFile: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** A child process with bounded-time ways to end it. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Whether the process is still running (a stopped one, SIGSTOP, counts as running). */
  readonly running: boolean;
  /** Resolves when the process has exited. */
  readonly exited: Promise<ProcessExit>;
  readonly logFile: string;
  /** Sends a signal; false when the process is gone. */
  signal(sig: NodeJS.Signals): boolean;
  /** SIGKILL (after SIGCONT, so a paused process dies too) and await the exit for at most `waitMs`. */
  kill(waitMs?: number): Promise<ProcessExit | null>;
  /** SIGCONT and SIGTERM, SIGKILL after `graceMs`; resolves with the exit, or null if it outlived even that. */
  terminate(graceMs?: number): Promise<ProcessExit | null>;
  /** The output so far ('' once its folder is gone). */
  log(): string;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // a crashed run must not leave processes behind
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * Settles as `promise` does, or resolves with null after `ms`; a rejection that comes after `ms`
 * is dropped (an unhandled one ends a Node.js process: the drill's did, on a late TimeoutError).
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(null), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * Spawns a process in its own process group (so a Ctrl-C reaches only its owner, which stops it in
 * order) with stdout and stderr appended to `logFile`; every process still running when this
 * Node.js process exits is killed.
 */
export function spawnManaged(opts: ManagedProcessOptions): ManagedProcess {
  installExitHook();
  mkdirSync(dirname(opts.logFile), { recursive: true });
  const fd = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', fd, fd],
      detached: true,
    });
  } finally {
    closeSync(fd);
  }
  live.add(child);
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
    child.once('error', (err) => {
      live.delete(child);
      resolve({ code: null, signal: null, error: err.message });
    });
  });
  const running = (): boolean => child.pid !== undefined && child.exitCode === null && child.signalCode === null && live.has(child);
  const kill = async (waitMs = 5_000): Promise<ProcessExit | null> => {
    if (running()) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    return within(exited, waitMs);
  };
  return {
    name: opts.name,
    get pid() {
      return child.pid ?? -1;
    },
    get running() {
      return running();
    },
    exited,
    logFile: opts.logFile,
    signal: (sig) => running() && child.kill(sig),
    kill,
    async terminate(graceMs = 10_000) {
      if (running()) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      const exit = await within(exited, graceMs);
      return exit ?? kill();
    },
    log() {
      try {
        return readFileSync(opts.logFile, 'utf8');
      } catch {
        return '';
      }
    },
  };
}
