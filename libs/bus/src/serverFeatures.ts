import type { Bus } from './bus.ts';
import { natsOf } from './natsBus.ts';

/** What the connected nats-server offers that muster's appends could use. */
export interface ServerFeatures {
  /** The server's version as it said when the connection was made ('' before it did). */
  version: string;
  /**
   * Atomic batch publish (nats-server 2.12 and later, on a stream with `allow_atomic`): one turn
   * could be one batch, with the fence on its first message (DESIGN.md §3). Detected, not used yet.
   */
  atomicBatch: boolean;
}

/** The features of the server a bus is connected to (contract v1.2's append needs none of them). */
export function serverFeatures(bus: Bus): ServerFeatures {
  const version = natsOf(bus).nc.info?.version ?? '';
  const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10));
  return { version, atomicBatch: major > 2 || (major === 2 && minor >= 12) };
}
