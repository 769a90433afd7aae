import { createHash } from 'node:crypto';
import { canonicalChunks, canonicalDigest } from '@muster/core';
import type { ByteScratch, CanonicalCache, State, Transaction } from '@muster/core';

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
 * cache kept across calls, only what changed since the last state hashed is serialised again; with
 * a scratch buffer, the state is serialised a chunk at a time and its bytes are never held whole.
 */
export function nativeStateHash(state: State, cache?: CanonicalCache | ByteScratch): string {
  if (cache === undefined) return canonicalDigest(state, payloadHash);
  const hash = createHash('sha256');
  for (const chunk of canonicalChunks(state, cache)) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * `nativeStateHash` a slice at a time: it yields to the event loop after every `sliceMs` of
 * serialising and hashing, so that hashing a state of many megabytes never stalls the caller's
 * other work for longer than a slice. The state must not change meanwhile (states never do).
 */
export async function nativeStateHashInSlices(state: State, cache: CanonicalCache, sliceMs = 2): Promise<string> {
  const hash = createHash('sha256');
  let sliceStarted = performance.now();
  for (const chunk of canonicalChunks(state, cache)) {
    hash.update(chunk);
    if (performance.now() - sliceStarted >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
  return hash.digest('hex');
}

/** `transactionHash` of the core with Node's native SHA-256 (same value). */
export function nativeTransactionHash(tx: Transaction): string {
  return canonicalDigest(tx, payloadHash);
}
