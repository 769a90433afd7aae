import { canonicalBytes } from '@muster/core';
import type { Transaction } from '@muster/core';
import type { Bus } from './bus.ts';
import { BusError } from './busError.ts';
import { isAppendConflict, isTimeout } from './isWrongLastSequence.ts';
import type { StreamAck } from './jetStreamPublisher.ts';
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
  /**
   * The append is pipelined on an earlier one of the same writer still in flight: its first
   * message also expects, as the last msg id, the hash of the transaction before it (DESIGN.md §3).
   * Without it, if another writer appended as many messages as the earlier append carried, the
   * first message here would find exactly the sequence it expects and land after a foreign write.
   */
  chained?: boolean;
}

/** A transaction with its canonical bytes and their hash (its msg id, the next one's `prev`). */
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
 * Appends transactions to MUSTER_LOG, one message each, fenced: the first expects the stream's
 * last sequence to be `expectLastSeq`, each next one the sequence before it and, as its last msg
 * id, the hash of the transaction before it (each message's msg id is its own hash). All are
 * published before any ack is awaited; only a clean prefix of the batch can land. Transactions
 * may come encoded already (`encodeTransaction`), so a writer that hashed them serialises once.
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
  const pending = messages.map((m, i) =>
    js.publish(subjects.log, m.payload, {
      msgID: m.hash,
      // The sequence alone would let a stale batch land its tail: if another writer appended k
      // messages, our k-th transaction finds exactly the sequence it expects. The last msg id
      // check fails it, since the message before it is not our previous transaction.
      expect: i === 0 && !(opts.chained === true && m.tx.prev !== null) ? { lastSequence: expectLastSeq } : { lastSequence: expectLastSeq + i, lastMsgID: m.tx.prev ?? '' },
      ...(opts.timeoutMs === undefined ? {} : { timeout: opts.timeoutMs }),
    }),
  );
  const settled = await Promise.allSettled(pending);
  const outcomes = settled.map((s, i): Outcome => {
    if (s.status === 'fulfilled') return landedWhereExpected(s.value, expectLastSeq + i + 1);
    const cause: unknown = s.reason;
    return { landed: false, code: isAppendConflict(cause) ? 'conflict' : isTimeout(cause) ? 'timeout' : 'error', cause };
  });
  // an ack at index k proves 0..k landed, since each expected the one before it
  const lastLanded = outcomes.findLastIndex((o) => o.landed);
  const committed = outcomes.slice(0, lastLanded + 1).map((_, i) => expectLastSeq + i + 1);
  const failure = outcomes.slice(lastLanded + 1).find((o) => !o.landed);
  if (failure === undefined || failure.landed) return { ok: true, seqs: committed };
  return { ok: false, code: failure.code, committed, cause: failure.cause };
}

type Outcome = { landed: true } | { landed: false; code: AppendFailureCode; cause: unknown };

function landedWhereExpected(ack: StreamAck, seq: number): Outcome {
  // a duplicate ack means this very transaction is already stored (msg id = its hash):
  // a repeat of an append whose ack was lost is fine where expected, a conflict anywhere else
  if (!ack.duplicate || ack.seq === seq) return { landed: true };
  const cause = new BusError('CHAIN_BROKEN', `transaction already in the log at ${ack.seq}, expected at ${seq}`, { seq: ack.seq });
  return { landed: false, code: 'conflict', cause };
}
