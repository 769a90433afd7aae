import { describe, expect, it } from 'vitest';
import { auditLog } from '@muster/auditor';
import { slotNode, job } from '@muster/core/testing';
import { Cluster, advance, register, schedule, scheduleDueBy, submit } from '@muster/core/testing';
import { copyLog, offline, rechain } from './histories.ts';

// A session whose leader held a runtime limit back (SessionStarted.dueBy: inputs stored before it
// were not yet ingested) is re-derived with that time: the audit agrees with it, and not with the
// same session written without it.
describe('the audit of a session that held a deadline back', () => {
  const cluster = new Cluster();
  for (const step of [register(slotNode('n1', 1)), submit({ ...job('j'), runtimeLimitMs: 1_000 }), schedule(), advance(1_500), submit(job('other')), scheduleDueBy(900), schedule()]) cluster.run(step);
  const log = cluster.transactions.map(({ seq, tx }) => ({ seq, tx }));
  const held = log.findIndex((l) => l.tx.events[0]?.type === 'SessionStarted' && l.tx.events[0].dueBy === 900);

  it('re-derives it clean, and the next session stops the gang', async () => {
    expect(held).toBeGreaterThan(0);
    expect(log[held]!.tx.events.some((e) => e.type === 'GangAborted' && e.jobId === 'j')).toBe(false);
    expect(log.slice(held + 1).flatMap((l) => l.tx.events).some((e) => e.type === 'GangAborted' && e.jobId === 'j' && e.reason.category === 'runtime-limit')).toBe(true);
    const report = await auditLog(offline(log));
    expect(report.failures).toEqual([]);
  });

  it('finds a session whose dueBy was taken out (it would have stopped the gang)', async () => {
    const tampered = copyLog(log);
    const started = tampered[held]!.tx.events[0]!;
    if (started.type === 'SessionStarted') delete started.dueBy;
    const report = await auditLog(offline(rechain(tampered)));
    expect(report.failures.map((f) => f.seq)).toContain(log[held]!.seq);
  });
});
