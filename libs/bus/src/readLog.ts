import { transactionHash } from '@muster/core';
import type { LoggedTransaction, Transaction } from '@muster/core';
import { BusError } from './busError.ts';
import { LOG_STREAM } from './names.ts';
import { orderedMessages } from './orderedMessages.ts';
import type { OrderedReadOptions } from './orderedMessages.ts';
import { parseTransaction } from './parseTransaction.ts';
import { payloadHash } from './payloadHash.ts';
import type { Bus } from './bus.ts';

/**
 * A transaction as read from MUSTER_LOG, with the SHA-256 of its stored bytes: its hash (the next
 * one's `prev`) for every message written canonically, as `appendTransactions` writes them.
 */
export interface ReadTransaction extends LoggedTransaction {
  hash: string;
}

/** Options of `readLog`. */
export interface ReadLogOptions extends OrderedReadOptions {
  /** Check sequences are contiguous and each `prev` is the hash of the transaction before (default true). */
  verifyChain?: boolean;
  /**
   * The hash of the transaction at `fromSeq - 1`, which the first `prev` must equal; null when
   * reading from the start. Left out with `fromSeq > 1`, the first `prev` is taken on trust.
   */
  prevHash?: string | null;
}

/**
 * The log's transactions from `fromSeq` on, in order, as `{seq, tx}`; with `verifyChain` it throws
 * a `BusError` (`CHAIN_BROKEN`, `LOG_GAP`, `BAD_MESSAGE`) carrying the sequence where the log is broken.
 */
export async function* readLog(bus: Bus, opts: ReadLogOptions = {}): AsyncGenerator<ReadTransaction, void, undefined> {
  const fromSeq = opts.fromSeq ?? 1;
  const verify = opts.verifyChain ?? true;
  let expectedPrev: string | null | undefined = opts.prevHash !== undefined ? opts.prevHash : fromSeq === 1 ? null : undefined;
  // the previous transaction, whose hash is computed from its object only when the cheap hash of
  // its bytes (equal for canonically written messages) does not match
  let previous: Transaction | null = null;
  let expectedSeq = fromSeq;
  for await (const m of orderedMessages(bus, LOG_STREAM, opts)) {
    const tx: Transaction = parseTransaction(m.data, m.seq);
    const hash = payloadHash(m.data);
    if (verify) {
      if (m.seq !== expectedSeq) {
        throw new BusError('LOG_GAP', `log sequence ${m.seq} follows ${expectedSeq - 1}: messages are missing`, { seq: m.seq });
      }
      if (expectedPrev !== undefined && tx.prev !== expectedPrev) {
        const wanted = previous === null ? expectedPrev : transactionHash(previous);
        if (tx.prev !== wanted) {
          throw new BusError(
            'CHAIN_BROKEN',
            `log sequence ${m.seq}: prev ${String(tx.prev)} is not the hash of the transaction before it (${String(wanted)})`,
            { seq: m.seq },
          );
        }
      }
      expectedPrev = hash;
      previous = tx;
      expectedSeq = m.seq + 1;
    }
    yield { seq: m.seq, tx, hash };
  }
}
