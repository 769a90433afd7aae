// A replica whose stream definitions would drop stored messages stops at once: its start-up retry,
// for a JetStream not answering yet, does not repeat a refusal that waiting cannot change.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { OUTPUT_STREAM, isBusError } from '@muster/bus';
import { startScheduler } from '@muster/scheduler';
import { NatsAdmin } from '../support/natsAdmin.ts';
import { startNatsServer } from '../support/natsServer.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a replica the bus refuses its streams', () => {
  it('stops at once with the refusal when applying a definition would drop stored output', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const admin = await NatsAdmin.connect(server.url);
    cleanups.push(() => admin.close());
    // no limits: the definition's age and size limits would drop what it holds
    await admin.createStream(OUTPUT_STREAM, ['muster.out.>']);
    const start = performance.now();
    const err = await startScheduler({ natsUrl: server.url, id: 's1', logger: pino({ level: 'silent' }), heartbeatTimeoutMs: 0, snapshotEvery: 0 }).then(
      async (replica) => {
        await replica.stop();
        return null;
      },
      (e: unknown) => e,
    );
    expect(isBusError(err, 'UNSAFE_STREAM_UPDATE')).toBe(true);
    // the start-up retry would have tried for a minute
    expect(performance.now() - start).toBeLessThan(10_000);
  }, 90_000);
});
