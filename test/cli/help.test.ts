// `--help` works on the command and on every subcommand: usage on stdout, exit 0.
import { describe, expect, it } from 'vitest';
import { runMuster } from './runMuster.ts';

const SUBCOMMANDS = ['up', 'submit', 'jobs', 'nodes', 'explain', 'logs', 'cancel', 'close', 'policy', 'queue', 'queues', 'scheduler', 'agent', 'simulate'];

describe('muster --help', () => {
  it('lists every subcommand', async () => {
    const run = await runMuster(['--help']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    for (const name of SUBCOMMANDS) expect(run.stdout).toMatch(new RegExp(`^\\s+${name}\\b`, 'm'));
  });

  it.each(SUBCOMMANDS)('%s --help shows its usage and exits 0', async (name) => {
    const run = await runMuster([name, '--help']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`Usage: muster ${name}`);
    // every networked subcommand takes --nats (simulate runs offline, but reads a live log with --from-log); queue only groups set
    if (name !== 'queue') expect(run.stdout).toContain('--nats <url>');
    if (name === 'queue') expect(run.stdout).toMatch(/^\s+set \[options\] <file>/m);
    if (name === 'simulate') expect(run.stdout).toContain('--from-log');
  });

  it('queue set --help shows its usage, with --nats', async () => {
    const run = await runMuster(['queue', 'set', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: muster queue set [options] <file>');
    expect(run.stdout).toContain('--nats <url>');
  });
});
