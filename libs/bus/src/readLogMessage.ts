import type { JetStreamManager } from '@nats-io/jetstream';
import type { LoggedTransaction } from '@muster/core';
import { LOG_STREAM } from './names.ts';
import { parseTransaction } from './parseTransaction.ts';

/** The transaction at one log sequence, or null if there is none. */
export async function readLogMessage(jsm: JetStreamManager, seq: number): Promise<LoggedTransaction | null> {
  const sm = await jsm.streams.getMessage(LOG_STREAM, { seq });
  return sm === null ? null : { seq: sm.seq, tx: parseTransaction(sm.data, sm.seq) };
}
