// A running replica's look at the streams (StreamWatch) takes each stream on its own: one that
// fails (here a definition whose subjects overlap another stream's) is said at debug and does not
// stop the lease bucket after it from being created again in the same look. Before, one stream
// that failed or did not answer ended the look, and a look waited up to 20 s for a stream the
// cluster could not place before it got to the rest (a CI run saw the deleted lease bucket not
// created again within 15 s).
import { afterEach, describe, expect, it } from 'vitest';
import { bucketStream, connect, ensureStreams, streamDefinitions, streamInfo } from '@muster/bus';
import type { StreamDefinition } from '@muster/bus';
import { StreamWatch } from '@muster/scheduler/testing';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { startNatsServer } from '../support/natsServer.ts';
import { capturingLogger } from '../support/capturedLog.ts';
import type { LogLine } from '../support/capturedLog.ts';

const LEASE_STREAM = bucketStream.kv('muster_leader');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("a running replica's look at the streams", () => {
  it('creates the lease bucket again though a stream before it fails, and says which failed', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const bus = await connect({ servers: server.url, name: 'test' });
    cleanups.push(() => bus.close());
    await ensureStreams(bus, { replicas: 1 });
    const admin = await NatsAdmin.connect(server.url);
    cleanups.push(() => admin.close());
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
