import { describe, expect, it } from 'vitest';
import { ALL_FAULT_KINDS } from '@muster/drill';
import { expectOneLineError, runMuster } from '../cli/runMuster.ts';

// `muster drill`'s flags as a user meets them: the fault kinds come from the drill's registry, and
// the replicas' lease is checked before anything starts (no cluster, no NATS).
describe('muster drill flags', () => {
  it('lists every fault kind of the registry with --faults list', async () => {
    const run = await runMuster(['drill', '--faults', 'list']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n').map((l) => l.split(/\s+/)[0])).toEqual(ALL_FAULT_KINDS);
  });

  it('rejects a lease that is not a positive whole number of ms, naming --lease-ms', async () => {
    for (const bad of ['0', '-400', '0.5', 'fast']) expectOneLineError(await runMuster(['drill', '--lease-ms', bad, '--duration', '1']), 2, /--lease-ms must be a positive integer/);
  });

  it('rejects a lease no shorter than the paused leader\'s pause, naming both', async () => {
    expectOneLineError(await runMuster(['drill', '--lease-ms', '2500', '--duration', '1']), 2, /pauseMs \(2500\) must be longer than leaseMs \(2500\)/);
  });

  it('rejects an unknown fault kind, naming the registered ones', async () => {
    expectOneLineError(await runMuster(['drill', '--faults', 'kill-leader,unplug-rack', '--duration', '1']), 2, `unknown fault unplug-rack (one of ${ALL_FAULT_KINDS.join(', ')})`);
  });
});
