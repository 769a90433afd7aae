import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DECISIONS_STREAM, LOG_SEQ_HEADER, lastPublishedDecision, lastPublishedLogSeq, publishDecisions, streamInfo } from '@muster/bus';
import type { DecisionMessage } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

function decisionsOf(logSeq: number): DecisionMessage[] {
  return [
    { subject: 'muster.decision.j1', payload: { type: 'GangCommitted', jobId: 'j1', session: 1 }, msgId: `muster:${logSeq}:0`, logSeq },
    { subject: 'muster.bind.n1', payload: { type: 'Bind', jobId: 'j1' }, msgId: `muster:${logSeq}:1:n1`, logSeq },
    { subject: 'muster.bind.n2', payload: { type: 'Bind', jobId: 'j1' }, msgId: `muster:${logSeq}:1:n2`, logSeq },
  ];
}

describe('publishDecisions and lastPublishedLogSeq', () => {
  it('reports 0 and null on an empty stream', async () => {
    expect(await lastPublishedLogSeq(bus.bus)).toBe(0);
    expect(await lastPublishedDecision(bus.bus)).toBeNull();
  });

  it('publishes with msg id and log sequence header, and a new leader re-publishing finds duplicates', async () => {
    const first = await publishDecisions(bus.bus, decisionsOf(7));
    expect(first.ok).toBe(true);
    if (!first.ok) throw new Error('unreachable');
    expect(first.acks.map((a) => [a.seq, a.duplicate])).toEqual([[1, false], [2, false], [3, false]]);
    expect(await lastPublishedLogSeq(bus.bus)).toBe(7);
    expect(await lastPublishedDecision(bus.bus)).toEqual({ streamSeq: 3, logSeq: 7, msgId: 'muster:7:1:n2', subject: 'muster.bind.n2', data: '{"jobId":"j1","type":"Bind"}' });

    // the predecessor died after publishing part of log sequence 9: the successor publishes all of it
    const partial = await publishDecisions(bus.bus, decisionsOf(9).slice(0, 1));
    expect(partial.ok).toBe(true);
    const again = await publishDecisions(bus.bus, [...decisionsOf(9), ...decisionsOf(12)]);
    if (!again.ok) throw new Error(`publish failed: ${String(again.cause)}`);
    expect(again.acks.map((a) => a.duplicate)).toEqual([true, false, false, false, false, false]);
    expect((await streamInfo(bus.bus, DECISIONS_STREAM)).messages).toBe(9);
    expect(await lastPublishedLogSeq(bus.bus)).toBe(12);

    const stored = await bus.admin.message(DECISIONS_STREAM, 1);
    expect(stored?.header(LOG_SEQ_HEADER)).toBe('7');
    expect(stored?.header('Nats-Msg-Id')).toBe('muster:7:0');
    expect(stored?.text()).toBe('{"jobId":"j1","session":1,"type":"GangCommitted"}');
  });

  it('reports a decision it could not publish as failed, by index', async () => {
    const result = await publishDecisions(bus.bus, [
      ...decisionsOf(1).slice(0, 1),
      { subject: 'muster.nowhere.x', payload: {}, msgId: 'muster:1:9', logSeq: 1 },
    ]);
    expect(result).toMatchObject({ ok: false, code: 'error', failed: [1] });
    expect(await lastPublishedLogSeq(bus.bus)).toBe(1);
  });

  it('fails loudly when the last decision lacks its log sequence header', async () => {
    await bus.admin.publish('muster.stop.n1', '{}');
    await expect(lastPublishedLogSeq(bus.bus)).rejects.toMatchObject({ code: 'BAD_MESSAGE', seq: 1 });
  });
});
