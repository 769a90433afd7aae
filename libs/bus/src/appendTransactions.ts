import { canonicalBytes } from '@muster/core';
import type { Transaction } from '@muster/core';
import type { Bus } from './bus.ts';
import { BusError } from './busError.ts';
import { isWrongLastSequence, isTimeout } from './isWrongLastSequence.ts';
import { MAX_TRANSACTION_BYTES } from './names.ts';
import { natsOf } from './natsBus.ts';
import { payloadHash } from './payloadHash.ts';
import { subjects } from './subjects.ts';

/** Why an append did not fully land: lost the fence, unknown outcome, or anything else. */
export type AppendFailureCode = 'conflict' | 'timeout' | 'error';

/**
 * The outcome of `appendTransactions`: every transaction landed at `seqs`, or only the clean
 * prefix `committed` (stream sequences) is known to have landed and the writer must step down.
 */
export type AppendResult =
  | { ok: true; seqs: number[] }
  | { ok: false; code: AppendFailureCode; committed: number[]; cause: unknown };

/** Options of `appendTransactions`. */
export interface AppendOptions {
  /** Milliseconds to wait for each ack before the outcome counts as unknown (default: the bus's). */
  timeoutMs?: number;
}

/** A transaction with its canonical bytes and their hash (the next one's `prev`). */
export interface EncodedTransaction {
  tx: Transaction;
  payload: Uint8Array;
  hash: string;
}

/** Serialises a transaction once, for `appendTransactions` and for chaining the next one onto it. */
export function encodeTransaction(tx: Transaction): EncodedTransaction {
  const payload = canonicalBytes(tx);
  // transactionHash(tx) is the SHA-256 of exactly these bytes
  return { tx, payload, hash: payloadHash(payload) };
}

/**
 * Appends transactions to MUSTER_LOG, one message each, fenced by sequence alone (DESIGN.md §3,
 * contract v1.2): the first expects the stream's last sequence to be `expectLastSeq`, each next one
 * the sequence of the one before it, and each is published only once the one before it is
 * acknowledged. No message carries a msg id or expects a last msg id: every copy of the stream
 * re-checks that expectation when it applies a message, and a copy that caught up from a stream
 * snapshot does not know the last msg id, so it would stop for good (test/bus/lastMsgIdCatchup).
 * Published one at a time, a message can only land right after its acknowledged predecessor: had
 * two been in flight and another writer appended one message in between, the second would find
 * exactly the sequence it expects and land after the foreign write. Only a clean prefix can land.
 * Transactions may come encoded already (`encodeTransaction`), so a writer that hashed them
 * serialises once.
 */
export async function appendTransactions(
  bus: Bus,
  txs: readonly (Transaction | EncodedTransaction)[],
  expectLastSeq: number,
  opts: AppendOptions = {},
): Promise<AppendResult> {
  const messages: EncodedTransaction[] = [];
  for (let i = 0; i < txs.length; i++) {
    const given = txs[i] as Transaction | EncodedTransaction;
    const encoded = 'payload' in given ? given : encodeTransaction(given);
    // refuse before publishing anything, so nothing of a bad batch lands
    if (i > 0 && encoded.tx.prev !== messages[i - 1]?.hash) {
      const cause = new BusError('CHAIN_BROKEN', `transaction ${i} of the batch does not chain to the one before it`);
      return { ok: false, code: 'error', committed: [], cause };
    }
    if (encoded.payload.length > MAX_TRANSACTION_BYTES) {
      const cause = new BusError(
        'TRANSACTION_TOO_LARGE',
        `transaction ${i} of the batch is ${encoded.payload.length} bytes, over ${MAX_TRANSACTION_BYTES}: split the session`,
      );
      return { ok: false, code: 'error', committed: [], cause };
    }
    messages.push(encoded);
  }
  const { js } = natsOf(bus);
  const committed: number[] = [];
  for (const m of messages) {
    const seq = expectLastSeq + committed.length + 1;
    try {
      const ack = await js.publish(subjects.log, m.payload, {
        expect: { lastSequence: seq - 1 },
        ...(opts.timeoutMs === undefined ? {} : { timeout: opts.timeoutMs }),
      });
      if (ack.seq !== seq) {
        const cause = new BusError('CHAIN_BROKEN', `transaction stored at ${ack.seq}, expected at ${seq}`, { seq: ack.seq });
        return { ok: false, code: 'conflict', committed, cause };
      }
    } catch (cause) {
      return { ok: false, code: isWrongLastSequence(cause) ? 'conflict' : isTimeout(cause) ? 'timeout' : 'error', committed, cause };
    }
    committed.push(seq);
  }
  return { ok: true, seqs: committed };
}
