// `muster simulate --swf`: a Standard Workload Format trace run as a workload; bad flags and bad lines are one line and exit 2.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectOneLineError, runMuster } from './runMuster.ts';

const dir = mkdtempSync(join(tmpdir(), 'muster-swf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TRACE = `; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 300 -1 1 3 -1 -1 1 1 -1 -1
2 10 -1 50 4 -1 -1 4 60 -1 1 4 -1 -1 1 1 -1 -1
3 10 -1 -1 1 -1 -1 1 60 -1 0 4 -1 -1 1 1 -1 -1
4 20 -1 30 1 -1 -1 1 40 -1 1 5 -1 -1 1 1 -1 -1
`;

describe('muster simulate --swf', () => {
  it('runs the trace on the hosts asked for, notes the jobs left out, and ends with the Summary', async () => {
    const file = join(dir, 'trace.swf');
    writeFileSync(file, TRACE);
    const run = await runMuster(['simulate', '--swf', file, '--hosts', '2', '--slots-per-host', '2', '--estimate', 'requested', '--limit', '3', '--policy', '{"reserveDepth":0}']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('muster: note: 1 job(s) with no run time (field 4 is -1) left out\n');
    const lines = run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.type === 'GangCommitted').map((l) => [l.jobId, l.at])).toEqual([['j1', 0], ['j4', 20_000], ['j2', 100_000]]);
    expect(lines.at(-1)).toMatchObject({ type: 'Summary', nodes: 2, jobs: { succeeded: 3 }, sizes: { 1: 1, 2: 1, '3-4': 1 } });
  });

  it('refuses a bad line, a bad flag, and flags of --swf without it, with one line and exit 2', async () => {
    const bad = join(dir, 'bad.swf');
    writeFileSync(bad, '; MaxProcs: 4\n1 0 -1 100 2 -1 -1 2 300 -1 1 3 -1 -1 1 1 -1\n');
    expectOneLineError(await runMuster(['simulate', '--swf', bad]), 2, /bad\.swf: line 2: a job has 18 fields, this line has 17/);
    const good = join(dir, 'trace.swf');
    expectOneLineError(await runMuster(['simulate', '--swf', good, '--estimate', 'guess']), 2, /--estimate: must be actual or requested/);
    expectOneLineError(await runMuster(['simulate', '--swf', good, '--hosts', '0']), 2, /--hosts: must be an integer ≥ 1/);
    expectOneLineError(await runMuster(['simulate', '--hosts', '3', good]), 2, /--hosts and --limit shape the workload of --swf/);
  });
});
