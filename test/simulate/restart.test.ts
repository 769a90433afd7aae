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
