// A running replica's look at the streams (StreamWatch) takes each stream on its own: one that
// fails (here a definition whose subjects overlap another stream's) is said at debug and does not
// stop the lease bucket after it from being created again in the same look. Before, one stream
// that failed or did not answer ended the look, and a look waited up to 20 s for a stream the
// cluster could not place before it got to the rest (a CI run saw the deleted lease bucket not
// created again within 15 s).
import { afterEach, describe, expect, it } from 'vitest';
import { bucketStream, streamDefinitions, streamInfo } from '@muster/bus';
import type { StreamDefinition } from '@muster/bus';
import { StreamWatch } from '@muster/scheduler/testing';
import { capturingLogger } from '../support/capturedLog.ts';
import type { LogLine } from '../support/capturedLog.ts';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

const LEASE_STREAM = bucketStream.kv('muster_leader');

let running: TestBus | null = null;
afterEach(async () => {
  await running?.stop();
  running = null;
});

describe("a running replica's look at the streams", () => {
  it('creates the lease bucket again though a stream before it fails, and says which failed', async () => {
    running = await startTestBus();
    const { bus, admin } = running;
    await admin.deleteStream(LEASE_STREAM);

    const input = streamDefinitions.find((d) => d.config.name === 'MUSTER_IN')!;
    const overlapping: StreamDefinition = { kind: 'stream', config: { ...input.config, name: 'MUSTER_IN_COPY' } };
    const lease = streamDefinitions.find((d) => d.config.name === LEASE_STREAM)!;
    const lines: LogLine[] = [];
    const watch = new StreamWatch(bus, 1, 500, capturingLogger('debug', (l) => lines.push(l)), [overlapping, lease]);
    await watch.check();
    await watch.stop();

    expect(await streamInfo(bus, LEASE_STREAM)).not.toBeNull();
    expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([`ALARM: kv ${LEASE_STREAM} was missing: created it again (what it held is gone)`]);
    expect(lines.filter((l) => l.msg === 'a stream could not be checked').map((l) => l.stream)).toEqual(['MUSTER_IN_COPY']);
  }, 60_000);
});
