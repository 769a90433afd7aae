import { describe, expect, it } from 'vitest';
import { auditLog } from '@muster/auditor';
import { STATE_SCHEMA, foldTransactions, initialState, stateHash } from '@muster/core';
import { goldenHistories, offline } from './histories.ts';

// Temporal's golden histories: logs recorded from the real scheduler replay to their checked-in
// state hash. A change that alters how existing logs fold fails here. A new STATE_SCHEMA changes
// every state hash (and so every Checkpoint of an old log) but must not change a single decision:
// the histories are then re-recorded (docs/audit.md), after the first test below has shown that the
// old logs still re-derive.
describe('golden histories', () => {
  const goldens = goldenHistories();

  it('are there, small, and cover elections, ingest, facts, multi-part sessions and checkpoints', () => {
    expect(goldens.map((g) => g.name)).toEqual(expect.arrayContaining(['big-session', 'lifecycle', 'loss-and-failover']));
    for (const g of goldens) expect(g.log).toHaveLength(g.expected.transactions);
    const kinds = new Set(goldens.flatMap((g) => g.log.map((l) => l.tx.kind)));
    expect([...kinds].sort()).toEqual(['checkpoint', 'election', 'fact', 'ingest', 'session']);
    expect(goldens.some((g) => g.log.some((l) => l.tx.parts > 1))).toBe(true);
    expect(goldens.some((g) => g.expected.kinds['election']! > 1)).toBe(true);
  });

  for (const g of goldens) {
    describe(g.name, () => {
      it('re-derives every decision and input and keeps every invariant, whatever state schema it was recorded with', async () => {
        const report = await auditLog(offline(g.log, g.inputs));
        expect(report.failures.filter((f) => f.check !== 'checkpoint')).toEqual([]);
        expect(report.divergence).toBeNull();
        expect(report.transactions).toBe(g.expected.transactions);
        expect(report.events).toBe(g.expected.events);
        expect(report.sessions).toBe(g.expected.sessions);
        expect(report.ingest).toEqual({ rederived: g.expected.inputs, structural: 0, lost: 0 });
        expect(report.decisionsRederived).toBe(g.expected.decisions.committed + g.expected.decisions.aborted);
        expect(report.invariants).toMatchObject({ checked: g.expected.transactions, count: 0 });
        expect(report.chain).toEqual({ ok: true });
      });

      it(`was recorded with the current STATE_SCHEMA ${STATE_SCHEMA} (else re-record it: npx tsx scripts/recordHistory.ts)`, () => {
        expect(g.expected.stateSchema).toBe(STATE_SCHEMA);
      });

      it('folds with the core alone to its checked-in state hash', () => {
        expect(stateHash(foldTransactions(initialState(), g.log))).toBe(g.expected.stateHash);
      });

      it('audits clean offline, every checkpoint included, to the same hash', async () => {
        const report = await auditLog(offline(g.log, g.inputs));
        expect(report.failures).toEqual([]);
        expect(report.clean).toBe(true);
        expect(report.stateHash).toBe(g.expected.stateHash);
        expect(report.lastSeq).toBe(g.expected.lastSeq);
        // a checkpoint transaction holds a Checkpoint, or is an empty mark of the state a later one names
        const checkpoints = g.log.filter((l) => l.tx.events.some((e) => e.type === 'Checkpoint')).length;
        expect(checkpoints).toBeGreaterThan(0);
        expect(report.checkpoints).toEqual({ checked: checkpoints, failed: 0 });
      });

      it('audits clean without its inputs, saying ingest was checked for structure only', async () => {
        const report = await auditLog(offline(g.log));
        expect(report.clean).toBe(true);
        expect(report.ingest).toEqual({ rederived: 0, structural: g.expected.inputs, lost: 0 });
        expect(report.notes.join(' ')).toMatch(/structure only/);
      });
    });
  }
});
