// The leader's input reader never skips an input silently: MUSTER_IN has no gaps (nothing deletes
// from it), so a reader that delivers past one was served from a copy with a hole. It reads the
// missing inputs again, and only after gapConfirmMs takes them as lost, with an alarm, and goes on.
// Real nats-server; the gap is real too: a MUSTER_IN made without deny_delete, one input deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputReader } from '@muster/scheduler/testing';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { eventually } from '../support/schedulerProcess.ts';
import { capturingLogger } from '../support/capturedLog.ts';
import type { LogLine } from '../support/capturedLog.ts';

describe('an input reader given inputs past a gap', () => {
  let bus: TestBus;

  beforeAll(async () => {
    bus = await startTestBus({ ensure: false });
    await bus.admin.createStream('MUSTER_IN', ['muster.in.>']);
  });

  afterAll(async () => {
    await bus?.stop();
  });

  it('reads the missing inputs again, and takes them as lost only after gapConfirmMs, with an alarm', async () => {
    for (let i = 1; i <= 5; i++) await bus.admin.publish('muster.in.submit', JSON.stringify({ id: `j${i}` }));
    await bus.admin.deleteMessage('MUSTER_IN', 3);
    const lines: LogLine[] = [];
    const stop = new AbortController();
    const reader = new InputReader({ bus: bus.bus, log: capturingLogger('warn', (l) => lines.push(l)), signal: stop.signal, onInput: () => undefined, gapConfirmMs: 2_000 }, 1);
    const running = reader.run();
    const taken: number[] = [];
    try {
      await eventually(() => (reader.waiting >= 2 ? true : null), 10_000, 'the inputs before the gap');
      await new Promise((r) => setTimeout(r, 1_000));
      // a second on: what is after the gap is not taken while the missing input is read again
      taken.push(...reader.take(10).map((i) => i.seq));
      expect(taken).toEqual([1, 2]);
      expect(lines.some((l) => l.level === 40 && JSON.stringify(l).includes('were skipped; reading them again'))).toBe(true);
      await eventually(() => (reader.waiting >= 2 ? true : null), 10_000, 'the inputs after the gap, once it counts as lost');
      taken.push(...reader.take(10).map((i) => i.seq));
      expect(taken).toEqual([1, 2, 4, 5]);
      expect(lines.filter((l) => l.level === 50)).toEqual([expect.objectContaining({ msg: 'ALARM: MUSTER_IN does not give these inputs (lost by JetStream): going on without them', from: 3, to: 3 })]);
    } finally {
      stop.abort();
      await running;
    }
  });
});
