import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { libfaketime, partitionUnavailable, slowNetworkUnavailable } from '@muster/drill';
import { drillWithWhy, expectNothingLost } from '../support/drillExpectations.ts';

// the fast clock needs Debian's faketime; without it the drill skips that kind and says why
const FAST_CLOCK = libfaketime() !== null;
// the partition adds iptables rules: root only. The full disk (root only too) has a drill of its
// own (drillFullDisk.test.ts): a replica connected to the node whose disk is full waits until
// that node is killed, longer than this test's 10 s liveness bound at times
const PARTITION = partitionUnavailable() === null;
// 200 ms and 5 % loss between the replicas and NATS (the drill's proxies and an iptables rule): root only
const SLOW = slowNetworkUnavailable() === null;
const EXTRA = [
  ...(FAST_CLOCK ? (['fast-clock'] as const) : []),
  ...(PARTITION ? (['partition-leader'] as const) : []),
  ...(SLOW ? (['slow-network'] as const) : []),
];

// The short HA drill of `npm test`: a real three-node NATS cluster with R3 streams, three scheduler
// replica processes and simulated agents under a steady workload, with every fault kind in turn: a
// kill -9 of the leader, a SIGSTOP of the leader longer than its lease, a kill -9 and restart of a
// NATS node, a restart of a standby, and a replica whose clock is an hour ahead (faketime) taking over. The processes' logs are kept (and named in the failure)
// only when the drill fails.
describe('HA drill (short)', () => {
  it('loses, duplicates, contradicts and overcommits nothing, replicas and replay agree, and takeovers are measured', async () => {
    // the figures go to the test output, so every run (here and in CI) shows its takeover times
    const { report, why } = await drillWithWhy({
      // each kind beyond the four takes a few seconds and a pause: room for one of each
      durationS: 50 + 6 * EXTRA.length,
      schedule: 'sequential',
      faults: ['kill-leader', 'pause-leader', 'restart-nats', 'restart-standby', ...EXTRA],
      faultEveryS: 3,
      seed: 6,
      rate: 4,
      settleTimeoutMs: 40_000,
      // half the default: room for it in the short drill
      slowMs: 5_000,
      keepLogsDir: join(tmpdir(), 'muster-drill-test'),
    });
    expect(report.error, why).toBeNull();
    expect(report.workload.accepted, why).toBeGreaterThan(100);
    expect(report.faults.filter((f) => f.skipped === null).map((f) => f.kind), why).toEqual(
      expect.arrayContaining(['kill-leader', 'pause-leader', 'restart-nats', 'restart-standby', ...EXTRA]),
    );
    expect(report.faults.filter((f) => f.error !== null), why).toEqual([]);
    expectNothingLost(report, why);
    const c = report.checks;
    expect(c.unreleased.count, why).toBe(0);
    expect(c.divergence.statuses.map((s) => s.seq), why).toEqual(Array(3).fill(report.workload.logTransactions));
    expect(c.liveness.violations, why).toEqual([]);
    // a replica with its clock an hour ahead led, and the log's time stayed with true time
    if (FAST_CLOCK) expect(report.faults.some((f) => f.fastClock?.led === true), why).toBe(true);
    if (FAST_CLOCK) expect(c.clock.fastStamps, why).toBeGreaterThan(0);
    expect(c.clock.jumps, why).toEqual([]);
    // the slowed replicas answered a status request at least the delay later than before
    if (SLOW) {
      const slow = report.faults.find((f) => f.slow !== undefined)?.slow;
      expect(slow?.statusMs.during, why).toBeGreaterThanOrEqual(150);
    }
    expect(report.takeover.kill.count, why).toBeGreaterThanOrEqual(1);
    expect(report.takeover.pause.count, why).toBeGreaterThanOrEqual(1);
    expect(report.takeover.missing, why).toBe(0);
    // a takeover waits out the lease (400 ms) counted from the last refresh a standby saw, which can
    // precede the fault by one refresh interval (133 ms); it must not take more than a few seconds
    expect(report.takeover.all.max, why).toBeGreaterThan(250);
    expect(report.takeover.all.max, why).toBeLessThan(5_000);
    expect(report.stop?.survivors, why).toEqual([]);
    expect(report.verdict, why).toBe('pass');
    expect(report.ok, why).toBe(true);
    if (report.logsDir !== null) rmSync(report.logsDir, { recursive: true, force: true });
  }, 240_000);
});
