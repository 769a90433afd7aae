import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishInput, readInputs } from '@muster/bus';
import type { InputMessage } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

describe('readInputs and publishInput', () => {
  it('yields each stored input once, with its subject, text, msg id and size', async () => {
    expect(await collectInputs(1)).toEqual([]);
    await publishInput(bus.bus, 'muster.in.submit', { id: 'j1', tasks: 1 }, 'j1:aa');
    await publishInput(bus.bus, 'muster.in.submit', { id: 'j1', tasks: 1 }, 'j1:aa');
    await publishInput(bus.bus, 'muster.in.node.n1.drain', '{}');
    await publishInput(bus.bus, 'muster.in.cancel', { jobId: 'é' }, 'cancel-é');
    const inputs = await collectInputs(1);
    expect(inputs).toEqual([
      { seq: 1, subject: 'muster.in.submit', data: '{"id":"j1","tasks":1}', msgId: 'j1:aa', size: 21 },
      { seq: 2, subject: 'muster.in.node.n1.drain', data: '{}', size: 2 },
      { seq: 3, subject: 'muster.in.cancel', data: '{"jobId":"é"}', msgId: 'cancel-é', size: 14 },
    ]);
    expect((await collectInputs(3)).map((i) => i.seq)).toEqual([3]);
  });

  it('refuses to publish outside muster.in.', async () => {
    await expect(publishInput(bus.bus, 'muster.log.tx', {})).rejects.toThrow(RangeError);
  });

  it('tails new inputs from a sequence until aborted', async () => {
    await publishInput(bus.bus, 'muster.in.close', { jobId: 'j0' });
    const abort = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const input of readInputs(bus.bus, { fromSeq: 2, tail: true, signal: abort.signal })) {
        seen.push(input.seq);
        if (input.seq === 3) abort.abort();
      }
    })();
    await publishInput(bus.bus, 'muster.in.close', { jobId: 'j1' });
    await publishInput(bus.bus, 'muster.in.close', { jobId: 'j2' });
    await reading;
    expect(seen).toEqual([2, 3]);
  });
});

async function collectInputs(fromSeq: number): Promise<InputMessage[]> {
  const out: InputMessage[] = [];
  for await (const input of readInputs(bus.bus, { fromSeq })) out.push(input);
  return out;
}
