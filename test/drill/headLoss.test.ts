// The drill's JetStream watch names the moment a stream nothing deletes from stops starting at
// sequence 1: JetStream 2.9.10 dropped MUSTER_IN's first 148,516 messages on every copy in an hour
// soak (docs/drills.md), and the report could only say so at the end, not beside which faults.
import { afterEach, describe, expect, it } from 'vitest';
import { publishInput } from '@muster/bus';
import { watchJetStream } from '@muster/drill';
import type { HeadLoss } from '@muster/drill';
import { startTestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe("the drill's JetStream watch", () => {
  it("says when MUSTER_IN's head is gone, once per new first sequence, and not before", async () => {
    // MUSTER_IN without its deny_delete, so that the test can do what JetStream did
    const bus = await startTestBus({ ensure: false });
    cleanups.push(() => bus.stop());
    await bus.admin.createStream('MUSTER_IN', ['muster.in.>']);
    for (let i = 1; i <= 5; i++) await publishInput(bus.bus, 'muster.in.submit', { n: i }, `head-${i}`);
    const heard: HeadLoss[] = [];
    const watch = await watchJetStream(bus.bus, { intervalMs: 50, onHeadLoss: (l) => heard.push(l) });
    cleanups.push(() => watch.stop());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).toEqual([]);
    await bus.admin.deleteMessage('MUSTER_IN', 1);
    await bus.admin.deleteMessage('MUSTER_IN', 2);
    await eventually(() => heard.some((l) => l.firstSeq === 3), 5_000, 'the head loss said');
    await bus.admin.deleteMessage('MUSTER_IN', 3);
    await eventually(() => heard.some((l) => l.firstSeq === 4), 5_000, 'the larger loss said');
    const { headLosses } = await watch.stop();
    expect(headLosses.map((l) => [l.stream, l.firstSeq])).toEqual(heard.map((l) => [l.stream, l.firstSeq]));
    expect(new Set(heard.map((l) => l.stream))).toEqual(new Set(['MUSTER_IN']));
    // each first sequence said once
    expect(new Set(heard.map((l) => l.firstSeq)).size).toBe(heard.length);
  }, 30_000);
});
