// The bulk readers the audit reads MUSTER_IN and MUSTER_DECISIONS with: batches pulled ahead of
// the caller, several pulls per stream, ending at the last sequence when the read began.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DECISIONS_STREAM, IN_STREAM, publishDecisions, publishInput, readDecisionBatches, readInputBatches } from '@muster/bus';
import type { InputMessage, StoredDecision } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

async function publishInputs(from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) await publishInput(bus.bus, 'muster.in.cancel', { jobId: `j${i}` }, `cancel-${i}`);
}

async function consumers(stream: string): Promise<number> {
  return bus.admin.consumerCount(stream);
}

describe('bulk readers', () => {
  it('read every input from a sequence in order, over several pulls, up to the last one stored when the read began', async () => {
    await publishInputs(1, 10);
    const batches: InputMessage[][] = [];
    for await (const batch of readInputBatches(bus.bus, { fromSeq: 2, batch: 3, withMsgId: false })) {
      // published after the read began: not part of it
      if (batches.length === 0) await publishInputs(11, 12);
      batches.push(batch);
    }
    const inputs = batches.flat();
    expect(inputs.map((i) => i.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(inputs[0]).toEqual({ seq: 2, subject: 'muster.in.cancel', data: '{"jobId":"j2"}', size: 14 });
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(6);
    const [withIds] = await collect(readInputBatches(bus.bus, { fromSeq: 12 }));
    expect(withIds).toEqual([{ seq: 12, subject: 'muster.in.cancel', data: '{"jobId":"j12"}', msgId: 'cancel-12', size: 15 }]);
    expect(await collect(readInputBatches(bus.bus, { fromSeq: 13 }))).toEqual([]);
    expect(await consumers(IN_STREAM)).toBe(0);
  });

  it('release the consumer when the caller stops early or the read is aborted', async () => {
    await publishInputs(1, 20);
    for await (const batch of readInputBatches(bus.bus, { batch: 4 })) {
      expect(batch[0]?.seq).toBe(1);
      break;
    }
    expect(await consumers(IN_STREAM)).toBe(0);

    await publishDecisions(
      bus.bus,
      Array.from({ length: 20 }, (_, i) => ({ subject: `muster.decision.j${i}`, payload: { i }, msgId: `muster:${i + 1}:0`, logSeq: i + 1 })),
    );
    const abort = new AbortController();
    const seen: StoredDecision[] = [];
    for await (const batch of readDecisionBatches(bus.bus, { batch: 4, signal: abort.signal })) {
      seen.push(...batch);
      abort.abort();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(20);
    expect(seen[0]).toEqual({ seq: 1, subject: 'muster.decision.j0', msgId: 'muster:1:0', logSeq: 1, data: '{"i":0}' });
    expect(await consumers(DECISIONS_STREAM)).toBe(0);
  });
});

async function collect<T>(batches: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const batch of batches) out.push(batch);
  return out;
}
