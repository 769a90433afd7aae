import { createHash } from 'node:crypto';
import { nativeTransactionHash } from '@muster/bus';
import type { Transaction } from '@muster/core';
import { shortHash } from './shortHash.ts';

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
  private previous: { tx: Transaction; payloadHash: string } | null = null;

  /** Starts after transaction `seq` as stored (an audit of a later range): the next one must follow and link to it. */
  startAfter(seq: number, tx: Transaction, payload?: Uint8Array): void {
    this.previous = link(tx, payload);
    this.expectedSeq = seq + 1;
  }

  /**
   * Checks the next transaction. The hash of a transaction is taken first of its stored bytes
   * (`payload`, when read from NATS) or else of `JSON.stringify(tx)`, natively: a canonical writer's
   * bytes are its canonical JSON, and a transaction parsed from canonical JSON stringifies back to
   * it. Only when that does not match is the canonical hash computed (and then it decides).
   */
  check(seq: number, tx: Transaction, payload?: Uint8Array): ChainBreak | null {
    const previous = this.previous;
    const expectedSeq = this.expectedSeq;
    this.previous = link(tx, payload);
    this.expectedSeq = seq + 1;
    if (seq > expectedSeq) {
      const missing = seq - expectedSeq === 1 ? `transaction ${expectedSeq} is missing` : `transactions ${expectedSeq}..${seq - 1} are missing`;
      return { seq: expectedSeq, message: `${missing} (the log goes from ${expectedSeq - 1} to ${seq})` };
    }
    if (seq < expectedSeq) return { seq, message: `sequence ${seq} comes after ${expectedSeq - 1}: the log goes backwards` };
    if (previous === null) {
      return tx.prev === null ? null : { seq, message: `transaction ${seq} is the first of the log but records prev ${shortHash(tx.prev)}, not null` };
    }
    if (tx.prev === previous.payloadHash) return null;
    const wanted = nativeTransactionHash(previous.tx);
    if (tx.prev === wanted) return null;
    return {
      seq,
      message: `transaction ${seq} records prev ${shortHash(tx.prev)} but transaction ${seq - 1} hashes to ${shortHash(wanted)}: ${seq - 1} was altered, or ${seq} does not follow it`,
    };
  }
}

// a transaction and the SHA-256 of its stored bytes (or of its JSON text), which the next one's prev names
function link(tx: Transaction, payload: Uint8Array | undefined): { tx: Transaction; payloadHash: string } {
  return { tx, payloadHash: createHash('sha256').update(payload ?? JSON.stringify(tx)).digest('hex') };
}
