// MUSTER_OUTPUT through the bus on a real nats-server: the stream is created with the others, a
// job's batches are read back in order (all members, one member, the latest batch of each), the
// read ends at the stored end unless it follows, and another job's output never shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_STREAM, publishOutput, readOutput, subjects } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

const encode = (lines: string[]): Uint8Array => new TextEncoder().encode(JSON.stringify({ attempt: 0, stream: 'stdout', lines }));
const linesOf = (data: Uint8Array): string[] => (JSON.parse(new TextDecoder().decode(data)) as { lines: string[] }).lines;

describe('readOutput and publishOutput', () => {
  let bus: TestBus;

  beforeAll(async () => {
    bus = await startTestBus();
    const put = (node: string, job: string, member: number, lines: string[]) => publishOutput(bus.bus, subjects.output(node, job, member), encode(lines));
    await put('n1', 'j', 0, ['a1']);
    await put('n2', 'j', 1, ['b1']);
    await put('n1', 'other', 0, ['x']);
    await put('n1', 'j', 0, ['a2', 'a3']);
    await put('n2', 'j', 1, ['b2']);
    await put('n1', 'other', 0, ['y']);
  });

  afterAll(async () => {
    await bus?.stop();
  });

  const read = async (jobId: string, opts: Parameters<typeof readOutput>[2] = {}): Promise<string[]> => {
    const got: string[] = [];
    for await (const m of readOutput(bus.bus, jobId, opts)) got.push(...linesOf(m.data).map((l) => `${m.subject.split('.')[2]}:${l}`));
    return got;
  };

  it('is created by ensureStreams with limits by age and bytes that drop old output', async () => {
    const info = await bus.admin.streamInfo(OUTPUT_STREAM);
    expect(info.config).toMatchObject({ subjects: ['muster.out.>'], discard: 'old', max_bytes: 1073741824, max_age: 604800000000000 });
  });

  it("reads one job's batches in the order they were stored, and ends there", async () => {
    expect(await read('j')).toEqual(['n1:a1', 'n2:b1', 'n1:a2', 'n1:a3', 'n2:b2']);
    expect(await read('j', { member: 1 })).toEqual(['n2:b1', 'n2:b2']);
  });

  it('reads only the latest batch of each member with latest', async () => {
    expect(await read('j', { latest: true })).toEqual(['n1:a2', 'n1:a3', 'n2:b2']);
  });

  it('gives nothing for a job without output, at once', async () => {
    expect(await read('nothing-here')).toEqual([]);
  });

  it('follows what comes after the stored batches until aborted', async () => {
    const stop = new AbortController();
    const got: string[] = [];
    const following = (async () => {
      for await (const m of readOutput(bus.bus, 'live', { follow: true, signal: stop.signal })) {
        got.push(...linesOf(m.data));
        if (got.length === 2) stop.abort();
      }
    })();
    await publishOutput(bus.bus, subjects.output('n1', 'live', 0), encode(['one']));
    await publishOutput(bus.bus, subjects.output('n1', 'live', 0), encode(['two']));
    await following;
    expect(got).toEqual(['one', 'two']);
  });
});
