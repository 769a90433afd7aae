import type { JetStreamManager } from '@nats-io/jetstream';
import { IN_STREAM, LOG_STREAM } from './names.ts';

/**
 * The last sequence of MUSTER_LOG (0 when empty); a reader that sees it smaller than a sequence it
 * already folded knows the server lost acknowledged writes.
 */
export async function lastLogSequence(jsm: JetStreamManager): Promise<number> {
  return (await jsm.streams.info(LOG_STREAM)).state.last_seq;
}

/** The last sequence of MUSTER_IN (0 when empty): how far the inputs a leader must ingest go. */
export async function lastInputSequence(jsm: JetStreamManager): Promise<number> {
  return (await jsm.streams.info(IN_STREAM)).state.last_seq;
}
