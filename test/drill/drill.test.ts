import { describe, expect, it } from 'vitest';
import { drillTable, runDrill } from '@muster/auditor';

// The short HA drill of `npm test`: a real three-node NATS cluster with R3 streams, three scheduler
// replica processes and simulated agents under a steady workload, with kills -9 of the leader and
// SIGSTOPs of the leader longer than its lease. The NATS node restart is left to `muster drill` and
// the soak: after one, a leader can still stall on its inputs (see docs/drills.md), and CI must not
// be a coin toss.
describe('HA drill (short)', () => {
  it('loses, duplicates, contradicts and overcommits nothing, replicas and replay agree, and takeovers are measured', async () => {
    const lines: string[] = [];
    const report = await runDrill(
      { durationS: 45, schedule: 'sequential', faults: ['kill-leader', 'pause-leader'], faultEveryS: 3, seed: 6, rate: 4, settleTimeoutMs: 40_000 },
      { progress: (line) => lines.push(line) },
    );
    const why = `\n${drillTable(report)}\n${lines.join('\n')}`;
    expect(report.error, why).toBeNull();
    expect(report.workload.accepted, why).toBeGreaterThan(100);
    expect(report.faults.filter((f) => f.skipped === null).map((f) => f.kind), why).toEqual(expect.arrayContaining(['kill-leader', 'pause-leader']));
    expect(report.faults.filter((f) => f.error !== null), why).toEqual([]);
    const c = report.checks;
    expect(c.lost.count, why).toBe(0);
    expect(c.neverCommitted.count, why).toBe(0);
    expect(c.duplicated.count, why).toBe(0);
    expect(c.contradicted.count, why).toBe(0);
    expect(c.overcommit.count + c.overcommit.auditor, why).toBe(0);
    expect(c.unreleased.count, why).toBe(0);
    expect([c.divergence.replicas, c.divergence.replay, c.divergence.notAtEnd, c.divergence.auditor], why).toEqual([0, 0, 0, 0]);
    expect(c.divergence.statuses.map((s) => s.seq), why).toEqual(Array(3).fill(report.workload.logTransactions));
    expect(c.liveness.violations, why).toEqual([]);
    expect(report.auditor?.clean, why).toBe(true);
    expect(report.takeover.kill.count, why).toBeGreaterThanOrEqual(1);
    expect(report.takeover.pause.count, why).toBeGreaterThanOrEqual(1);
    expect(report.takeover.missing, why).toBe(0);
    // a takeover waits out the lease (600 ms) and must not take more than a few seconds here
    expect(report.takeover.all.max, why).toBeGreaterThan(600);
    expect(report.takeover.all.max, why).toBeLessThan(5_000);
    expect(report.stop?.survivors, why).toEqual([]);
    expect(report.ok, why).toBe(true);
  }, 240_000);
});
