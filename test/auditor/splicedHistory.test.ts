import { describe, expect, it } from 'vitest';
import { auditLog } from '@muster/auditor';
import type { Input } from '@muster/core';
import { copyLog, golden, offline } from '../audit/histories.ts';

// A log written again over another history (docs/drills.md, the 15-minute soak: JetStream lost
// acknowledged transactions and a new leader wrote on the shrunk log) folds to a state the core
// never makes; re-deriving a session on it threw inside the core (`Cannot read properties of null
// (reading '0')`, placement picking GPUs the state says are free) and the audit crashed.
describe('the audit of a log spliced from two histories', () => {
  it('reports the transaction it cannot re-derive instead of crashing', async () => {
    const first = golden('queues');
    const second = golden('lifecycle');
    const kept = copyLog(first.log.slice(0, 14));
    const other = copyLog(second.log.slice(19));
    other.forEach((t, i) => (t.seq = kept.length + 1 + i));
    const report = await auditLog(offline([...kept, ...other], first.inputs));
    expect(report.clean).toBe(false);
    expect(report.lastSeq).toBe(kept.length + other.length);
    // the audit went on to the end of the log and found where the histories meet
    expect(report.divergences).toBeGreaterThan(0);
    expect(report.divergence?.seq).toBe(kept.length + 1);
  });

  it('still fails, not reports a broken log, when reading the inputs times out', async () => {
    const history = golden('lifecycle');
    // MUSTER_IN not answering: the inputs' reader throws what nats.js throws on a timeout, when the
    // audit first reads them (at the first ingest)
    const timedOut = [{
      get seq(): number {
        throw Object.assign(new Error('timeout'), { name: 'TimeoutError' });
      },
    }] as unknown as Input[];
    await expect(auditLog({ transactions: copyLog(history.log), inputs: timedOut })).rejects.toThrow('timeout');
  });
});
