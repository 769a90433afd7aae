import { describe, expect, it } from 'vitest';
import type { ObjectResult } from '@nats-io/obj';
import { readObjectBytes } from './objectRead.ts';

// A store whose object yields `chunks` and then, unless `ends`, nothing more (a consumer that stalled).
function storeOf(chunks: Uint8Array[], ends: boolean): { get(): Promise<ObjectResult | null>; cancelled: () => boolean } {
  let cancelled = false;
  return {
    cancelled: () => cancelled,
    get: async () => {
      const data = new ReadableStream<Uint8Array>({
        start(c) {
          for (const chunk of chunks) c.enqueue(chunk);
          if (ends) c.close();
        },
        cancel() {
          cancelled = true;
        },
      });
      return { data, error: Promise.resolve(null), info: {} } as unknown as ObjectResult;
    },
  };
}

describe('readObjectBytes', () => {
  it('joins the chunks of an object that arrives whole', async () => {
    const bytes = await readObjectBytes(storeOf([new Uint8Array([1, 2]), new Uint8Array([3])], true), 'o', 200);
    expect([...bytes!]).toEqual([1, 2, 3]);
  });

  it('gives a read up as stalled when no chunk comes for the bound, and stops its consumer', async () => {
    const store = storeOf([new Uint8Array(1024)], false);
    const started = Date.now();
    await expect(readObjectBytes(store, 'snapshot-1', 300)).rejects.toMatchObject({ code: 'SNAPSHOT_TIMEOUT', message: 'object snapshot-1: no chunk for 300 ms after 1024 bytes' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(store.cancelled()).toBe(true);
  });

  it('is null for an object that is gone', async () => {
    expect(await readObjectBytes({ get: async () => null }, 'o', 200)).toBeNull();
  });
});
