// The SDK's logs() on a real nats-server: every member's lines of a job in stored order, with the
// node, member, attempt and stream each came from; filters by member and attempt; a follow that
// ends when aborted; bad arguments refused with the field named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishOutput, subjects } from '@muster/bus';
import { MusterClient, isMusterError } from '@muster/client';
import type { OutputLine } from '@muster/client';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

const batch = (attempt: number, stream: 'stdout' | 'stderr', lines: string[]): Uint8Array => new TextEncoder().encode(JSON.stringify({ attempt, stream, lines }));

describe('MusterClient.logs', () => {
  let bus: TestBus;
  let client: MusterClient;

  beforeAll(async () => {
    bus = await startTestBus();
    client = new MusterClient(bus.bus);
    await publishOutput(bus.bus, subjects.output('n1', 'train', 0), batch(0, 'stdout', ['m0 a0 1', 'm0 a0 2']));
    await publishOutput(bus.bus, subjects.output('n2', 'train', 1), batch(0, 'stderr', ['m1 a0 boom']));
    await publishOutput(bus.bus, subjects.output('n1', 'train', 0), batch(1, 'stdout', ['m0 a1 1']));
    await publishOutput(bus.bus, subjects.output('n1', 'train', 1), batch(1, 'stdout', ['m1 a1 1']));
    // not an output batch: skipped
    await publishOutput(bus.bus, subjects.output('n1', 'train', 2), new TextEncoder().encode('garbage'));
  });

  afterAll(async () => {
    await bus?.stop();
  });

  const all = async (opts: Parameters<MusterClient['logs']>[1] = {}): Promise<OutputLine[]> => {
    const lines: OutputLine[] = [];
    for await (const line of client.logs('train', opts)) lines.push(line);
    return lines;
  };

  it("gives every member's lines in stored order, with where each came from", async () => {
    expect(await all()).toEqual([
      { jobId: 'train', node: 'n1', member: 0, attempt: 0, stream: 'stdout', line: 'm0 a0 1', seq: expect.any(Number) },
      { jobId: 'train', node: 'n1', member: 0, attempt: 0, stream: 'stdout', line: 'm0 a0 2', seq: expect.any(Number) },
      { jobId: 'train', node: 'n2', member: 1, attempt: 0, stream: 'stderr', line: 'm1 a0 boom', seq: expect.any(Number) },
      { jobId: 'train', node: 'n1', member: 0, attempt: 1, stream: 'stdout', line: 'm0 a1 1', seq: expect.any(Number) },
      { jobId: 'train', node: 'n1', member: 1, attempt: 1, stream: 'stdout', line: 'm1 a1 1', seq: expect.any(Number) },
    ]);
  });

  it('filters by member and by attempt', async () => {
    expect((await all({ member: 1 })).map((l) => l.line)).toEqual(['m1 a0 boom', 'm1 a1 1']);
    expect((await all({ attempt: 1 })).map((l) => l.line)).toEqual(['m0 a1 1', 'm1 a1 1']);
    // the latest batch per member and node: member 1 ran on n2, then on n1
    expect((await all({ latest: true })).map((l) => l.line)).toEqual(['m1 a0 boom', 'm0 a1 1', 'm1 a1 1']);
    // a read resumes at a batch's sequence
    const third = (await all())[3] as OutputLine;
    expect((await all({ fromSeq: third.seq })).map((l) => l.line)).toEqual(['m0 a1 1', 'm1 a1 1']);
  });

  it('follows new lines until aborted', async () => {
    const stop = new AbortController();
    const got: string[] = [];
    const following = (async () => {
      for await (const line of client.logs('live', { follow: true, signal: stop.signal })) {
        got.push(line.line);
        stop.abort();
      }
    })();
    await publishOutput(bus.bus, subjects.output('n1', 'live', 0), batch(0, 'stdout', ['first']));
    await following;
    expect(got).toEqual(['first']);
  });

  it('refuses a bad job id, member or attempt, naming the field', async () => {
    for (const [call, path] of [
      [() => all({ member: -1 }), 'member'],
      [() => all({ attempt: 1.5 }), 'attempt'],
      [() => all({ fromSeq: 0 }), 'fromSeq'],
      [() => client.logs('bad id').next(), 'jobId'],
    ] as const) {
      const err = await call().catch((e: unknown) => e);
      expect(isMusterError(err) && err.code === 'invalid' && err.path === path, String(err)).toBe(true);
    }
  });
});
