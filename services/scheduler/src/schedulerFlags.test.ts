// The replica's tunables come from one table: its defaults are the replica's, a flag wins over its
// environment variable, and a bad value is refused naming the flag.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { resolveOptions } from './config.ts';
import { SCHEDULER_FLAGS, flagValues } from './schedulerFlags.ts';

describe('the scheduler flags table', () => {
  it('gives the replica its defaults', () => {
    const resolved = resolveOptions({ natsUrl: 'nats://127.0.0.1:4222', id: 's1', logger: pino({ level: 'silent' }) }) as unknown as Record<string, unknown>;
    for (const f of SCHEDULER_FLAGS) expect([f.option, resolved[f.option]]).toEqual([f.option, f.default]);
  });

  it('reads a flag, else its environment variable, and leaves out the rest', () => {
    const values = flagValues({ 'lease-ms': '700', 'metrics-host': '0.0.0.0' }, { MUSTER_LEASE_MS: '900', MUSTER_REPLICAS: '3', MUSTER_METRICS_PORT: '0' });
    expect(values).toEqual({ leaseMs: 700, metricsHost: '0.0.0.0', replicas: 3, metricsPort: 0 });
  });

  it('refuses a value that is not a whole number in range, naming the flag', () => {
    expect(flagValues({ 'lease-ms': '0' }, {})).toEqual(new Error('--lease-ms must be a positive integer, got 0'));
    expect(flagValues({}, { MUSTER_SNAPSHOT_EVERY: '-1' })).toEqual(new Error('--snapshot-every must be a non-negative integer, got -1'));
    expect(flagValues({}, { MUSTER_CHECKPOINT_EVERY: '1.5' })).toBeInstanceOf(Error);
    expect(flagValues({}, { MUSTER_METRICS_PORT: '' })).toBeInstanceOf(Error);
  });

  it('is the table docs/scheduler.md shows: each flag with its environment variable and default', () => {
    const doc = readFileSync(new URL('../../../docs/scheduler.md', import.meta.url), 'utf8');
    for (const f of SCHEDULER_FLAGS) expect(doc).toContain(`| \`--${f.flag}\` | \`${f.env}\` | ${f.default}`);
  });
});
