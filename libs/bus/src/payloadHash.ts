import { createHash } from 'node:crypto';
import { canonicalBytes } from '@muster/core';
import type { State, Transaction } from '@muster/core';

/**
 * Hex SHA-256 of a message payload. For a payload that is a transaction's canonical JSON (what
 * `appendTransactions` writes) this is the transaction's hash, computed natively and without
 * serialising again.
 */
export function payloadHash(payload: Uint8Array): string {
  return createHash('sha256').update(payload).digest('hex');
}

/** `stateHash` of the core with Node's native SHA-256 (same value, about 20 times faster). */
export function nativeStateHash(state: State): string {
  return payloadHash(canonicalBytes(state));
}

/** `transactionHash` of the core with Node's native SHA-256 (same value). */
export function nativeTransactionHash(tx: Transaction): string {
  return payloadHash(canonicalBytes(tx));
}
