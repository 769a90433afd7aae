import type { Bus } from './bus.ts';
import { LOG_STREAM } from './names.ts';
import { natsOf } from './natsBus.ts';
import { parseTransaction } from './parseTransaction.ts';
import { payloadHash } from './payloadHash.ts';
import type { ReadTransaction } from './readLog.ts';

/** The transaction at one log sequence (with the hash of its stored bytes), or null if there is none. */
export async function readLogMessage(bus: Bus, seq: number): Promise<ReadTransaction | null> {
  const sm = await (await natsOf(bus).jsm).streams.getMessage(LOG_STREAM, { seq });
  return sm === null ? null : { seq: sm.seq, tx: parseTransaction(sm.data, sm.seq), hash: payloadHash(sm.data) };
}
