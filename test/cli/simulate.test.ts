// `muster simulate` is the offline what-if run: same scenario, same bytes; a bad scenario is one line and exit 2.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runMuster } from './runMuster.ts';

const SCENARIO = new URL('../../examples/scenarios/reject-and-cancel.json', import.meta.url).pathname;
const BASIC = new URL('../../examples/scenarios/basic.json', import.meta.url).pathname;

describe('muster simulate', () => {
  it('prints the same bytes twice for the example scenario: decisions as JSON lines, then a summary', async () => {
    const first = await runMuster(['simulate', SCENARIO]);
    const second = await runMuster(['simulate', SCENARIO]);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    expect(second.stdout).toBe(first.stdout);
    const lines = first.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines.at(-1)?.type).toBe('Summary');
    expect(lines.map((l) => l.type)).toContain('GangCommitted');
    expect(lines.find((l) => l.type === 'JobRejected')).toMatchObject({ jobId: 'bad', reason: { category: 'invalid', path: 'minInstances' } });
  });

  it('prints the same bytes twice for the README scenario', async () => {
    const [first, second] = await Promise.all([runMuster(['simulate', BASIC]), runMuster(['simulate', BASIC])]);
    expect(first.code).toBe(0);
    expect(first.stdout).not.toBe('');
    expect(second.stdout).toBe(first.stdout);
  });

  it('rejects a file that is not a scenario with one line and exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muster-sim-'));
    try {
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, JSON.stringify({ nodes: [], steps: [{ launch: {} }] }));
      expectOneLineError(await runMuster(['simulate', bad]), 2, /bad\.json: .*steps/);
      writeFileSync(bad, '{');
      expectOneLineError(await runMuster(['simulate', bad]), 2, /bad\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
