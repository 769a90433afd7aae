// Up to when a leader's deadlines may fall due (InputReader.ingestCut) while MUSTER_IN holds
// inputs no turn has taken. A new term's reader has delivered nothing at its first turns: inputs
// known to wait (the stream's end asked) but not when they were stored must hold every deadline.
// Found in a 200 gangs/s drill: a takeover's first session, before its reader delivered, stopped
// 15 gangs at their runtime limit whose completions had been stored a second before the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { publishInput } from '@muster/bus';
import { InputReader } from '@muster/scheduler/testing';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';

describe('the ingest cut of an input reader', () => {
  let bus: TestBus;

  beforeAll(async () => {
    bus = await startTestBus();
  });

  afterAll(async () => {
    await bus?.stop();
  });

  it('holds every deadline while inputs wait that it has not delivered, then cuts at the first stored, and at none once all are taken', async () => {
    const before = Date.now();
    for (let i = 1; i <= 3; i++) await publishInput(bus.bus, 'muster.in.submit', { id: `j${i}` }, `j${i}:1`);
    const stop = new AbortController();
    const reader = new InputReader({ bus: bus.bus, log: pino({ level: 'silent' }), signal: stop.signal, onInput: () => undefined }, 1);
    // nothing known of yet: no cut
    expect(reader.ingestCut()).toBeNull();
    await reader.lookBehind();
    expect(reader.ingestCut()).toBe(0);

    const running = reader.run();
    try {
      await eventually(() => (reader.waiting === 3 ? true : null), 10_000, 'the three inputs delivered');
      const cut = reader.ingestCut() as number;
      // when the first was stored, on this machine's clock (one clock: the offset is small)
      expect(cut).toBeGreaterThanOrEqual(before - 1_000);
      expect(cut).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(reader.take(10).map((i) => i.seq)).toEqual([1, 2, 3]);
      expect(reader.ingestCut()).toBeNull();
    } finally {
      stop.abort();
      await running;
    }
  });
});
