import { createHash } from 'node:crypto';
import { transactionHash } from '@muster/core';
import type { Transaction } from '@muster/core';

/** Where the chain first failed, and why. */
export interface ChainBreak {
  seq: number;
  message: string;
}

/**
 * Checks that sequences follow one another from 1 and that each transaction's `prev` is the hash
 * of the one before it. It keeps going after a break (checking each link against the transaction
 * actually before it), so one altered transaction is one break, not the rest of the log.
 */
export class ChainVerifier {
  private expectedSeq = 1;
  private previous: { tx: Transaction; payloadHash: string | null } | null = null;

  /**
   * Checks the next transaction; `payload` is its stored bytes when known (a canonical writer's
   * bytes hash to the transaction's hash, natively and without serialising again).
   */
  check(seq: number, tx: Transaction, payload?: Uint8Array): ChainBreak | null {
    const previous = this.previous;
    const expectedSeq = this.expectedSeq;
    this.previous = { tx, payloadHash: payload === undefined ? null : createHash('sha256').update(payload).digest('hex') };
    this.expectedSeq = seq + 1;
    if (seq > expectedSeq) {
      const missing = seq - expectedSeq === 1 ? `transaction ${expectedSeq} is missing` : `transactions ${expectedSeq}..${seq - 1} are missing`;
      return { seq: expectedSeq, message: `${missing} (the log goes from ${expectedSeq - 1} to ${seq})` };
    }
    if (seq < expectedSeq) return { seq, message: `sequence ${seq} comes after ${expectedSeq - 1}: the log goes backwards` };
    if (previous === null) {
      return tx.prev === null ? null : { seq, message: `transaction ${seq} is the first of the log but records prev ${short(tx.prev)}, not null` };
    }
    if (tx.prev !== null && tx.prev === previous.payloadHash) return null;
    const wanted = transactionHash(previous.tx);
    if (tx.prev === wanted) return null;
    return {
      seq,
      message: `transaction ${seq} records prev ${short(tx.prev)} but transaction ${seq - 1} hashes to ${short(wanted)}: ${seq - 1} was altered, or ${seq} does not follow it`,
    };
  }
}

function short(hash: string | null): string {
  return hash === null ? 'null' : hash.slice(0, 12);
}
