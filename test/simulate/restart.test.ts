import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runScenarioText } from '@muster/core';

// examples/scenarios/restart.json (docs/simulate.md): a gang whose member exits 7 is restarted
// whole after its backoff, a late report from the stopped attempt is refused, and the second
// failure ends it (maxRestarts 1).

const text = readFileSync(new URL('../../examples/scenarios/restart.json', import.meta.url), 'utf8');

function run(scenario = text): Record<string, unknown>[] {
  const r = runScenarioText(scenario, {});
  if (!r.ok) throw new Error(r.error);
  return r.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the restart example scenario', () => {
  it('prints GangRestarting, then a commit with attempt 1 at notBefore, then the failure that ends the job', () => {
    const lines = run().filter((l) => l.jobId === 'train');
    expect(lines.map((l) => l.type)).toEqual(['GangCommitted', 'GangRestarting', 'GangCommitted', 'JobFinished']);
    expect(lines[0]).toMatchObject({ rendezvous: { node: 'n1', address: '10.0.0.1', port: 29500 } });
    expect(lines[0]).not.toHaveProperty('attempt');
    expect(lines[1]).toEqual({ type: 'GangRestarting', jobId: 'train', at: 60_000, member: 3, node: 'n2', exitCode: 7, attempt: 1, notBefore: 90_000 });
    expect(lines[2]).toMatchObject({ at: 90_000, attempt: 1, rendezvous: { node: 'n1', port: 29500 } });
    expect(lines[3]).toEqual({ type: 'JobFinished', jobId: 'train', at: 95_000, outcome: 'failed', member: 1, node: 'n1', exitCode: 7, attempts: 2 });
    // the other gang whose member 0 shares n1 holds the next port
    expect(run().find((l) => l.jobId === 'eval')).toMatchObject({ rendezvous: { node: 'n1', port: 29501 } });
  });

  it('refuses the stopped attempt\'s late report, naming the attempt', () => {
    expect(run().find((l) => l.type === 'InputRejected')).toMatchObject({ reason: { path: 'attempt', message: 'attempt 0 of job train is over; the job is on attempt 1' } });
  });

  it('a rule {onExitCodes:[2], action:"fail"} ends the job at the first exit 2, with no restart', () => {
    const failFast = text.replace('"exitCode": 7, "attempt": 0 } },\n    { "schedule"', '"exitCode": 2, "attempt": 0 } },\n    { "schedule"');
    expect(failFast).not.toBe(text);
    const lines = run(failFast).filter((l) => l.jobId === 'train');
    expect(lines.map((l) => l.type)).toEqual(['GangCommitted', 'JobFinished']);
    expect(lines[1]).toMatchObject({ outcome: 'failed', member: 3, exitCode: 2, attempts: 1 });
  });

  it('a done step with a non-integer exit code is a scenario error naming the field', () => {
    const r = runScenarioText(text.replace('"exitCode": 7, "attempt": 0', '"exitCode": 7.5, "attempt": 0'), {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/^steps\.4\.done\.exitCode: /);
  });

  it('prints the same lines on every run', () => {
    expect(run()).toEqual(run());
  });
});

describe('a workload that fails attempts (contract v1.2)', () => {
  const workload = (fail: unknown, failurePolicy: unknown = { maxRestarts: 2, backoffMs: 30000 }): string => JSON.stringify({
    nodes: [{ id: 'n1', capacity: { cpu: 8000, memoryMb: 32768 } }, { id: 'n2', capacity: { cpu: 8000, memoryMb: 32768 } }],
    workload: [
      { at: 0, submit: { id: 'train', identity: { user: 'a' }, tasks: 4, resources: { cpu: 4000, memoryMb: 1024 }, failurePolicy }, runMs: 600_000, fail },
      { at: 10_000, submit: { id: 'small', identity: { user: 'b' }, tasks: 1, resources: { cpu: 4000, memoryMb: 1024 } }, runMs: 60_000 },
    ],
  });

  it('restarts the gang after each failing attempt, backfills its backoff, and counts the attempts', () => {
    const lines = run(workload({ attempts: 2, afterMs: 120_000, member: 1, exitCode: 7 }));
    const train = lines.filter((l) => l.jobId === 'train');
    expect(train.filter((l) => l.type === 'GangRestarting')).toMatchObject([{ at: 120_000, attempt: 1, notBefore: 150_000 }, { at: 300_000, attempt: 2, notBefore: 330_000 }]);
    expect(train.filter((l) => l.type === 'GangCommitted').map((l) => l.attempt)).toEqual([undefined, 1, 2]);
    // the small job takes the room the stopped gang left during its backoff
    expect(lines.find((l) => l.type === 'GangCommitted' && l.jobId === 'small')).toMatchObject({ at: 120_000 });
    expect(train.find((l) => l.type === 'JobStats')).toEqual({ type: 'JobStats', jobId: 'train', submittedAt: 0, startedAt: 0, endedAt: 930_000, waitMs: 0, outcome: 'succeeded', attempts: 3 });
    expect(lines.find((l) => l.type === 'JobStats' && l.jobId === 'small')).not.toHaveProperty('attempts');
  });

  it('fails the job when its policy allows fewer restarts than the failures', () => {
    const lines = run(workload({ attempts: 2, afterMs: 120_000, exitCode: 7 }, { maxRestarts: 0 }));
    expect(lines.find((l) => l.type === 'JobFinished')).toMatchObject({ jobId: 'train', outcome: 'failed', member: 0, exitCode: 7, attempts: 1 });
    expect(lines.find((l) => l.type === 'JobStats' && l.jobId === 'train')).toMatchObject({ outcome: 'failed', endedAt: 120_000 });
  });

  it('a bad fail is a scenario error naming the field', () => {
    const r = runScenarioText(workload({ attempts: 0, afterMs: 1 }), {});
    expect(!r.ok && r.error).toBe('workload.0.fail.attempts: must be an integer ≥ 1 (how many attempts fail), got 0');
  });
});
