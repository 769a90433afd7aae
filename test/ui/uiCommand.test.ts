// `muster ui`'s own errors, one line each with the contract's exit codes: NATS unreachable (3),
// a bad port (2); its help names the loopback default.
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runMuster } from '../cli/runMuster.ts';

describe('muster ui', () => {
  it('says NATS is unreachable in one line, exit 3', async () => {
    const run = await runMuster(['ui', '--nats', 'nats://127.0.0.1:1', '--timeout', '500', '--port', '0']);
    expectOneLineError(run, 3, /cannot reach NATS/);
  });

  it('refuses a port that is not one, exit 2', async () => {
    expectOneLineError(await runMuster(['ui', '--port', '70000']), 2, /port/);
    expectOneLineError(await runMuster(['ui', '--port', 'abc']), 2, /port/);
  });

  it('documents its loopback default', async () => {
    const run = await runMuster(['ui', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('127.0.0.1');
  });
});
