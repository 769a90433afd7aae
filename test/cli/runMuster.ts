// Runs the `muster` command as a user would (node services/cli/bin/muster.js …) and captures its
// output and exit code. NATS_URL is removed from the environment so nothing reaches the system server.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { expect } from 'vitest';

const BIN = new URL('../../services/cli/bin/muster.js', import.meta.url).pathname;

/** The outcome of one `muster` run. */
export interface MusterRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A `muster` process still running. */
export interface MusterProcess {
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  exited: Promise<MusterRun>;
}

/** Options of a run. */
export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Kill the process (SIGKILL) after this long; the run then has a null code. */
  timeoutMs?: number;
  /** Start it as the leader of a process group (signal the group as a terminal's Ctrl-C does). */
  detached?: boolean;
}

/** Starts `muster args…` in the background. */
export function spawnMuster(args: string[], opts: RunOptions = {}): MusterProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  if (opts.env?.NATS_URL === undefined) delete env.NATS_URL;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const exited = new Promise<MusterRun>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, output: () => ({ stdout, stderr }), exited };
}

/** Runs `muster args…` to its end. */
export function runMuster(args: string[], opts: RunOptions = {}): Promise<MusterRun> {
  return spawnMuster(args, opts).exited;
}

/** Asserts a failed run: the given exit code and exactly one line on stderr, `muster: …`, no stack trace. */
export function expectOneLineError(run: MusterRun, code: number, contains?: string | RegExp): string {
  expect(run.code, `stderr: ${run.stderr}`).toBe(code);
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  expect(lines, run.stderr).toHaveLength(1);
  const line = lines[0] as string;
  expect(line).toMatch(/^muster: \S/);
  expect(line).not.toMatch(/\bat .*\.(ts|js):\d+/);
  if (contains !== undefined) expect(line).toMatch(contains);
  return line;
}
