import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DECISIONS_STREAM, isTimeout, isWrongLastSequence, jetStreamPublisher, streamInfo } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

const bytes = (text: string) => new TextEncoder().encode(text);

describe('JetStreamPublisher', () => {
  it('resolves each publish with its own ack, marks a repeated msg id as a duplicate, and stores the headers', async () => {
    const publisher = jetStreamPublisher(bus.bus);
    const acks = await Promise.all(
      Array.from({ length: 300 }, (_, i) => publisher.publish(`muster.decision.j${i}`, bytes(`{"i":${i}}`), { msgId: `m${i}`, headers: { 'Muster-Log-Seq': String(i + 1) } })),
    );
    expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(acks.every((a) => a.stream === DECISIONS_STREAM && !a.duplicate)).toBe(true);
    const again = await publisher.publish('muster.decision.j7', bytes('{"i":7}'), { msgId: 'm7' });
    expect(again).toEqual({ stream: DECISIONS_STREAM, seq: 8, duplicate: true });
    const stored = await bus.admin.message(DECISIONS_STREAM, 8);
    expect(stored?.header('Muster-Log-Seq')).toBe('8');
    expect(stored?.header('Nats-Msg-Id')).toBe('m7');
    expect(jetStreamPublisher(bus.bus)).toBe(publisher);
  });

  it('rejects a failed expectation with the JetStream API error', async () => {
    const publisher = jetStreamPublisher(bus.bus);
    await publisher.publish('muster.decision.a', bytes('{}'));
    const failed = publisher.publish('muster.decision.b', bytes('{}'), { headers: { 'Nats-Expected-Last-Sequence': '5' } });
    await expect(failed).rejects.toSatisfy(isWrongLastSequence);
    expect((await streamInfo(bus.bus, DECISIONS_STREAM)).messages).toBe(1);
  });

  it('rejects a publish to a subject no stream holds, and one no one acks in time, and ignores a late ack', async () => {
    const publisher = jetStreamPublisher(bus.bus);
    await expect(publisher.publish('nowhere.at.all', bytes('{}'), { timeoutMs: 2000 })).rejects.toThrow(/no responders/);
    // a responder that holds every request and answers only when told
    const held: ((reply: Uint8Array) => void)[] = [];
    bus.bus.serve('silent.subject', () => new Promise<Uint8Array>((resolve) => held.push(resolve)));
    await bus.bus.flush();
    const started = performance.now();
    await expect(publisher.publish('silent.subject', bytes('{}'), { timeoutMs: 300 })).rejects.toSatisfy(isTimeout);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(held).toHaveLength(1);
    held[0]!(bytes(JSON.stringify({ stream: DECISIONS_STREAM, seq: 99 })));
    // the publisher still works after the late ack
    expect((await publisher.publish('muster.decision.c', bytes('{}'))).seq).toBe(1);
  });
});
