// Runs the real `muster` command (services/cli/bin/muster.js) as a child process, for exit codes
// and output as a user sees them.
import { spawn } from 'node:child_process';

const BIN = new URL('../../services/cli/bin/muster.js', import.meta.url).pathname;

/** What one `muster` run printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `muster ...args` with NATS_URL unset, and waits for it to exit. */
export function runCli(args: string[], timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env['NATS_URL'];
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
