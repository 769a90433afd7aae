// `muster up` (what `npm start` runs) on a fresh folder: its own nats-server, a scheduler, simulated
// agents, the sample workload placed live; it stops everything it started when its time is up.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/schedulerProcess.ts';
import { spawnMuster } from './runMuster.ts';

function processesMentioning(text: string): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(text));
}

describe('muster up', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'muster-up-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('places the sample workload live and stops its nats-server, scheduler and agents after --duration', async () => {
    const up = spawnMuster(['up', '--duration', '15'], { cwd: dir, timeoutMs: 150_000 });
    await eventually(() => up.output().stdout.includes('simulated nodes'), 120_000, 'the stack to come up');
    expect(processesMentioning(join(dir, '.muster', 'nats'))).toHaveLength(1);
    const run = await up.exited;
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^nats-server {2}nats:\/\/127\.0\.0\.1:\d+ {2}\(JetStream data in \.muster\/nats\)$/m);
    expect(run.stdout).toMatch(/^agents {7}6 simulated nodes: sim-1 sim-2 sim-3 sim-4 sim-5 sim-6$/m);
    expect(run.stdout).toMatch(/^submitted etl$/m);
    expect(run.stdout).toMatch(/^\d\d:\d\d:\d\d {2}etl {2}placed {3}sim-\d task\[0,1,2,3\]$/m);
    expect(run.stdout).toMatch(/^\d\d:\d\d:\d\d {2}train-a100 {2}placed {3}sim-\d worker\[0,1\] gpus \d,\d; sim-\d worker\[2,3\] gpus \d,\d$/m);
    expect(run.stdout).toMatch(/^JOB\s+STATUS\s+USER/m);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('stopped');
    expect(existsSync(join(dir, '.muster', 'nats'))).toBe(true);
    expect(existsSync(join(dir, '.muster', 'up.log'))).toBe(true);
    expect(processesMentioning(join(dir, '.muster'))).toEqual([]);
  });

  it('stops everything it started on Ctrl-C (SIGINT)', async () => {
    const cwd = join(dir, 'interrupted');
    mkdirSync(cwd);
    const up = spawnMuster(['up', '--nodes', '3'], { cwd, timeoutMs: 150_000, detached: true });
    await eventually(() => / placed /.test(up.output().stdout), 120_000, 'a first placement');
    expect(processesMentioning(join(cwd, '.muster', 'nats'))).toHaveLength(1);
    // the whole foreground group gets SIGINT, as from a terminal
    process.kill(-(up.child.pid as number), 'SIGINT');
    const run = await up.exited;
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('stopped');
    expect(processesMentioning(join(cwd, '.muster', 'nats'))).toEqual([]);
  });
});
