import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveSnapshot } from '@muster/bus';
import { auditLog } from '@muster/auditor';
import type { AuditReport } from '@muster/auditor';
import { STATE_SCHEMA, canonicalHash } from '@muster/core';
import { runLive } from './recordWorkload.ts';
import type { LiveRun } from './recordWorkload.ts';
import { lifecycle } from './workloads.ts';

// An audit with a worker thread beside the main one reports the stored snapshots of a live run's
// log as the audit on one thread does, clean and with snapshots that do not check out.

/** The report without what depends on timing. */
function comparable(report: AuditReport): Omit<AuditReport, 'ms' | 'timings'> {
  const { ms: _ms, timings: _timings, ...rest } = report;
  return rest;
}

describe('snapshots in a parallel audit', () => {
  let run: LiveRun;
  beforeAll(async () => {
    run = await runLive(lifecycle);
  }, 180_000);
  afterAll(async () => {
    await run?.stop();
  });

  it('are reported as on one thread', async () => {
    const connection = { servers: run.server.url, name: 'parallel-snapshots-test' };
    const single = await auditLog(run.bus, { parallel: false });
    expect(single.clean).toBe(true);
    expect(single.snapshots.checked).toBeGreaterThan(0);
    expect(comparable(await auditLog(run.bus, { parallel: true, connection }))).toEqual(comparable(single));

    const [altered, foreign] = [run.log[3]!.seq, run.log[5]!.seq];
    await saveSnapshot(run.bus, { schema: STATE_SCHEMA, seq: altered, hash: canonicalHash({ seq: 0 }), state: { seq: altered } }, { keep: 5 });
    await saveSnapshot(run.bus, { schema: STATE_SCHEMA, seq: foreign, hash: canonicalHash({ seq: foreign }), state: { seq: foreign } }, { keep: 5 });
    const failing = await auditLog(run.bus, { parallel: false });
    expect(failing.snapshots.failed).toBe(2);
    const parallel = await auditLog(run.bus, { parallel: true, connection });
    expect(comparable(parallel)).toEqual(comparable(failing));
    expect(parallel.failures.filter((f) => f.check === 'snapshot').map((f) => f.seq)).toEqual([altered, foreign]);
  }, 120_000);
});
