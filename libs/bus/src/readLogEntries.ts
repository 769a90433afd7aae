import type { Transaction } from '@muster/core';
import { LOG_STREAM } from './names.ts';
import { orderedMessages } from './orderedMessages.ts';
import type { OrderedReadOptions } from './orderedMessages.ts';
import { parseTransaction } from './parseTransaction.ts';
import type { Bus } from './bus.ts';

/** One MUSTER_LOG message: its sequence, the decoded transaction and the payload bytes as stored. */
export interface LogEntry {
  seq: number;
  tx: Transaction;
  /** The bytes the server holds (a canonical writer's are the transaction's canonical JSON). */
  payload: Uint8Array;
}

/**
 * The log's messages from `fromSeq` on, in order, with their stored bytes and without any chain
 * check: for readers that verify the chain themselves (the auditor reports a break and goes on).
 */
export async function* readLogEntries(bus: Bus, opts: OrderedReadOptions = {}): AsyncGenerator<LogEntry, void, undefined> {
  for await (const m of orderedMessages(bus, LOG_STREAM, opts)) {
    yield { seq: m.seq, tx: parseTransaction(m.data, m.seq), payload: m.data };
  }
}
