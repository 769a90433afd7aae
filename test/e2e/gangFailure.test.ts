// Failure is the gang's (DESIGN.md §15), end to end on a real nats-server, a real scheduler and two
// real agents: a member that exits 7 gets its gang stopped within a second of its report, the gang
// restarts whole (MUSTER_ATTEMPT 1) and fails after maxRestarts; a rule `{onExitCodes:[7], action:
// "fail"}` fails it at once; `muster logs` shows every member's output across the attempts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnMuster } from '../cli/runMuster.ts';
import { eventually } from '../support/schedulerProcess.ts';
import { startTwoAgentStack } from './twoAgentStack.ts';
import type { TwoAgentStack } from './twoAgentStack.ts';

// member 1 fails with 7 two seconds in; the others wait (as gloo or NCCL peers do) and say when they are stopped
const SCRIPT = [
  'echo "member $MUSTER_MEMBER attempt $MUSTER_ATTEMPT of $WORLD_SIZE starts"',
  'if [ "$MUSTER_MEMBER" = 1 ]; then sleep 2; echo "failing at $(date +%s%3N)"; exit 7; fi',
  'trap \'echo "stopped at $(date +%s%3N)"; exit 143\' TERM',
  'sleep 60 & wait',
].join('\n');

const job = (id: string, failurePolicy: unknown) => ({
  id,
  identity: { user: 'alice', queue: 'default', project: 'fail' },
  roles: [{ name: 'w', count: 4, resources: { cpu: 100, memoryMb: 64 }, command: ['sh', '-c', SCRIPT] }],
  placement: { policy: 'pack', ptile: 2 },
  failurePolicy,
});

describe('a failing member fails its gang (two real agents)', () => {
  let stack: TwoAgentStack;

  beforeAll(async () => {
    stack = await startTwoAgentStack('f');
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('a member exiting 7: the others are stopped within a second, the gang restarts whole as attempt 1, then fails after maxRestarts', async () => {
    expect((await stack.submit(job('fail-restart', { maxRestarts: 1, backoffMs: 500 }))).code).toBe(0);
    const finished = await stack.finished('fail-restart', 90_000);
    const logs = await stack.muster(['logs', 'fail-restart']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(finished.status, logs.stdout).toBe('failed');

    // every member started in both attempts, each attempt marked, attempt 1 after attempt 0
    const out = logs.stdout.split('\n');
    const boundary = out.findIndex((l) => /attempt 1$/.test(l) && !l.includes('|'));
    expect(boundary, logs.stdout).toBeGreaterThan(0);
    const starts = (lines: string[], attempt: number) =>
      lines.filter((l) => l.includes(`attempt ${attempt} of 4 starts`)).map((l) => l.split(' | ')[0]).sort();
    expect(starts(out.slice(0, boundary), 0)).toEqual(['0', '1', '2', '3']);
    expect(starts(out.slice(boundary), 1)).toEqual(['0', '1', '2', '3']);

    // in each attempt the other three were stopped within a second of member 1's exit
    const times = (lines: string[], what: string) => lines.filter((l) => l.includes(what)).map((l) => Number(/(\d{13})/.exec(l)?.[1]));
    for (const part of [out.slice(0, boundary), out.slice(boundary)]) {
      const [failedAt] = times(part, 'failing at');
      const stoppedAt = times(part, 'stopped at');
      expect(stoppedAt, logs.stdout).toHaveLength(3);
      const late = Math.max(...stoppedAt) - (failedAt as number);
      expect(late, `stopped ${late} ms after the failure`).toBeLessThan(1_000);
    }

    // the leader counted the one restart
    const metrics = await (await fetch(stack.scheduler.metricsUrl as string)).text();
    expect(metrics).toMatch(/^muster_gang_restarts_total\{replica="f"\} 1$/m);

    // --attempt and --member pick lines out
    const one = await stack.muster(['logs', 'fail-restart', '--attempt', '1', '--member', '2']);
    expect(one.stdout.trim().split('\n')).toEqual(['──┼ attempt 1', '2 | member 2 attempt 1 of 4 starts', expect.stringMatching(/^2 \| stopped at \d{13}$/)]);

    // the job view says which attempt failed last, and how; so does muster jobs
    expect(finished).toMatchObject({ attempt: 1, lastFailure: { member: 1, exitCode: 7 } });
    const jobs = await stack.muster(['jobs']);
    expect(jobs.stdout).toMatch(/^fail-restart\s+failed\s.*\s1\s+member 1 exit 7\s/m);
  }, 150_000);

  it('a rule {onExitCodes: [7], action: "fail"} fails the gang at its first failure', async () => {
    expect((await stack.submit(job('fail-rule', { maxRestarts: 3, backoffMs: 500, rules: [{ onExitCodes: [7], action: 'fail' }] }))).code).toBe(0);
    expect(await stack.finished('fail-rule', 90_000)).toMatchObject({ status: 'failed', attempt: 0, lastFailure: { member: 1, exitCode: 7 } });
    const logs = await stack.muster(['logs', 'fail-rule']);
    expect(logs.stdout).not.toContain('attempt 1');
  }, 120_000);

  it('muster logs --follow prints lines as they come and ends by itself once the job has ended', async () => {
    // long enough that the job still runs when the follow has printed tick 2, even on a loaded machine
    const script = 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "tick $i"; sleep 0.5; done';
    const spec = { id: 'ticks', identity: { user: 'alice', queue: 'default', project: 'fail' }, roles: [{ name: 'w', count: 2, resources: { cpu: 100, memoryMb: 64 }, command: ['sh', '-c', script] }] };
    expect((await stack.submit(spec)).code).toBe(0);
    const following = spawnMuster(['logs', 'ticks', '--follow', '--nats', stack.bus.urls.join(',')]);
    // lines come while the job still runs
    await eventually(() => following.output().stdout.includes('| tick 2'), 30_000, 'the follow to print tick 2');
    expect((await stack.client.job('ticks')).status).toBe('running');
    await stack.finished('ticks', 60_000);
    const run = await following.exited;
    expect(run.code, run.stderr).toBe(0);
    for (const m of [0, 1]) expect(run.stdout.split('\n').filter((l) => l.startsWith(`${m} | tick`))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `${m} | tick ${i}`));
  }, 90_000);

  it('muster logs: an unknown job and bad flags are one-line errors', async () => {
    const unknown = await stack.muster(['logs', 'no-such-job']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/^muster: .*no-such-job/);
    const bad = await stack.muster(['logs', 'fail-rule', '--member', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^muster: .*--member.*non-negative integer/);
  });
});
