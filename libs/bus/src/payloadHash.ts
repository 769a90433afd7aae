import { createHash } from 'node:crypto';

/**
 * Hex SHA-256 of a message payload. For a payload that is a transaction's canonical JSON (what
 * `appendTransactions` writes) this is the transaction's hash, computed natively and without
 * serialising again.
 */
export function payloadHash(payload: Uint8Array): string {
  return createHash('sha256').update(payload).digest('hex');
}
