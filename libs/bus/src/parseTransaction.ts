import type { Transaction } from '@muster/core';
import { BusError } from './busError.ts';

const decoder = new TextDecoder();

/** Decodes one MUSTER_LOG message into a transaction, or throws `BAD_MESSAGE` with its sequence. */
export function parseTransaction(data: Uint8Array, seq: number): Transaction {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch (err) {
    throw new BusError('BAD_MESSAGE', `log sequence ${seq} is not JSON`, { seq, cause: err });
  }
  const tx = value as Partial<Transaction> | null;
  // only what the chain and the fold cannot do without; the core validates the events
  if (typeof tx !== 'object' || tx === null || tx.v !== 1 || !Array.isArray(tx.events) || (tx.prev !== null && typeof tx.prev !== 'string')) {
    throw new BusError('BAD_MESSAGE', `log sequence ${seq} is not a v1 transaction envelope`, { seq });
  }
  return tx as Transaction;
}
