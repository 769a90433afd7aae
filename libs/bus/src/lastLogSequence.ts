import type { Bus } from './bus.ts';
import { IN_STREAM, LOG_STREAM } from './names.ts';
import { streamInfo } from './streamInfo.ts';

/**
 * The last sequence of MUSTER_LOG (0 when empty); a reader that sees it smaller than a sequence it
 * already folded knows the server lost acknowledged writes.
 */
export async function lastLogSequence(bus: Bus): Promise<number> {
  return (await streamInfo(bus, LOG_STREAM)).lastSeq;
}

/** The last sequence of MUSTER_IN (0 when empty): how far the inputs a leader must ingest go. */
export async function lastInputSequence(bus: Bus): Promise<number> {
  return (await streamInfo(bus, IN_STREAM)).lastSeq;
}
