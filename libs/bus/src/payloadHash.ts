import { createHash } from 'node:crypto';
import { canonicalDigest } from '@muster/core';
import type { CanonicalCache, State, Transaction } from '@muster/core';

/**
 * Hex SHA-256 of a message payload. For a payload that is a transaction's canonical JSON (what
 * `appendTransactions` writes) this is the transaction's hash, computed natively and without
 * serialising again.
 */
export function payloadHash(payload: Uint8Array): string {
  return createHash('sha256').update(payload).digest('hex');
}

/**
 * `stateHash` of the core with Node's native SHA-256 (same value, about 20 times faster); with a
 * cache kept across calls, only what changed since the last state hashed is serialised again.
 */
export function nativeStateHash(state: State, cache?: CanonicalCache): string {
  return canonicalDigest(state, payloadHash, cache);
}

/** `transactionHash` of the core with Node's native SHA-256 (same value). */
export function nativeTransactionHash(tx: Transaction): string {
  return canonicalDigest(tx, payloadHash);
}
