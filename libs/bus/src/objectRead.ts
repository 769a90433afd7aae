import type { ObjectResult } from '@nats-io/obj';
import { bounded } from './bounded.ts';
import { BusError } from './busError.ts';

/** Longest wait for the next chunk of an object being read before the read is given up as stalled. */
export const CHUNK_STALL_MS = 10_000;

/**
 * An object's bytes (null when it is gone), given up with `SNAPSHOT_TIMEOUT` when no chunk came for
 * `stallMs`: a read whose consumer stalled on a restarting NATS node otherwise held a replica's
 * rebuild for the whole load's bound (30 s in the hour soak; the read after it took 2 s).
 */
export async function readObjectBytes(store: { get(name: string): Promise<ObjectResult | null> }, name: string, stallMs = CHUNK_STALL_MS): Promise<Uint8Array | null> {
  const result = await store.get(name);
  if (result === null) return null;
  result.error.catch(() => undefined);
  const reader = result.data.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await bounded(reader.read(), stallMs, () => new BusError('SNAPSHOT_TIMEOUT', `object ${name}: no chunk for ${stallMs} ms after ${size} bytes`));
    } catch (err) {
      await reader.cancel().catch(() => undefined);
      throw err;
    }
    if (next.done) break;
    chunks.push(next.value);
    size += next.value.length;
  }
  const failed = await result.error;
  if (failed) throw failed;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}
