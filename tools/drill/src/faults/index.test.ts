import { describe, expect, it } from 'vitest';
import { faultLine } from '../drillFaults.ts';
import type { FaultRecord } from '../drillFaultRecord.ts';
import { drillDefaults, resolveDrillOptions } from '../drillOptions.ts';
import { takeovers } from '../drillTakeover.ts';
import { ALL_FAULT_KINDS, DRILL_FAULTS, FAULT_KINDS, faultsHelp } from './index.ts';
import type { FaultKind } from './index.ts';

// The registry is the one list of fault kinds: the names `--faults` takes, the default set, the
// help, which faults time a takeover and each kind's report line all come from its modules.

const record = (kind: FaultKind, extra: Partial<FaultRecord> = {}): FaultRecord => ({ n: 1, kind, target: 's1', at: 1_500, endedAt: 2_000, skipped: null, error: null, nextLeader: null, ...extra });

describe('the fault registry', () => {
  it('names each kind once, and the default set is every kind but partition-nats', () => {
    expect(new Set(ALL_FAULT_KINDS).size).toBe(DRILL_FAULTS.length);
    expect(drillDefaults().faults).toEqual(ALL_FAULT_KINDS.filter((k) => k !== 'partition-nats'));
    expect(FAULT_KINDS).toEqual(drillDefaults().faults);
  });

  it('accepts every registered kind and rejects another, naming them all', () => {
    expect(resolveDrillOptions({ faults: ALL_FAULT_KINDS }).faults).toEqual(ALL_FAULT_KINDS);
    expect(() => resolveDrillOptions({ faults: ['kill-leader', 'unplug-rack' as FaultKind] })).toThrow(`unknown fault unplug-rack (one of ${ALL_FAULT_KINDS.join(', ')})`);
  });

  it('lists every kind in the help, one line each, saying what it needs and whether it runs by default', () => {
    const lines = faultsHelp().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(ALL_FAULT_KINDS);
    expect(lines.find((l) => l.startsWith('partition-nats'))).toMatch(/\[on demand; needs root/);
    expect(lines.find((l) => l.startsWith('kill-leader'))).toMatch(/\[default\]$/);
  });

  it('times a takeover after the faults that take the leader down, and after no other', () => {
    const fastClock = { replica: 's3', aheadMs: 3_600_000, from: 1_000, to: 9_000, led: true, toSeq: 2, killed: 's1', killedAt: 1_500 };
    const timed = ALL_FAULT_KINDS.filter((kind) => takeovers([record(kind, kind === 'fast-clock' ? { target: 's3', fastClock } : {})], []).length > 0);
    expect(timed).toEqual(['kill-leader', 'pause-leader', 'fast-clock', 'partition-leader']);
    expect(takeovers([record('fast-clock', { target: 's3', fastClock })], [])[0]).toMatchObject({ kind: 'fast-clock', from: 's1' });
    expect(takeovers([record('kill-leader', { skipped: 'no leader answered' })], [])).toEqual([]);
  });

  it("prints each kind's own measurements on its report line", () => {
    const slow = { delayMs: 200, loss: 0.05, connections: 6, statusMs: { before: 3, during: 412 } };
    expect(faultLine(record('slow-network', { target: null, slow }))).toBe('fault 1 slow-network: done in 500 ms (200 ms and 5 % loss on 6 replica connections through the proxies; a status request took 3 ms before, 412 ms during)');
    const disk = { mb: 16, freeBytesWhenFull: 0, fullMs: 6_000, answeredWhenFull: false, answeredAfterFree: true, recovery: 'empty-store' as const };
    expect(faultLine(record('full-disk', { target: 'n2', caughtUpMs: 900, disk }))).toBe(
      'fault 1 full-disk n2: done in 500 ms, its copies current 900 ms after (tmpfs of 16 MB full for 6000 ms; its monitor answered at the end of that: no, once freed: yes; restarted on an empty store)',
    );
    expect(faultLine(record('kill-leader', { nextLeader: 's2' }))).toBe('fault 1 kill-leader s1: done in 500 ms, s2 leads');
  });
});
