// Transactions for bus tests: envelopes without events, chained by hash.
import { transactionHash } from '@muster/core';
import type { Transaction } from '@muster/core';

/** One event-less transaction after `prev`, told apart from others by `at`. */
export function tx(prev: string | null, at: number, leader = 'test-leader'): Transaction {
  return { v: 1, kind: 'fact', term: 1, leader, at, prev, session: 0, part: 1, parts: 1, events: [] };
}

/** `count` transactions that chain to each other, the first after `prev`. */
export function chain(count: number, prev: string | null = null, leader = 'test-leader', firstAt = 1): Transaction[] {
  const out: Transaction[] = [];
  for (let i = 0; i < count; i++) {
    const t = tx(i === 0 ? prev : transactionHash(out[i - 1] as Transaction), firstAt + i, leader);
    out.push(t);
  }
  return out;
}

/** The hash of the last transaction of a list (what the next one's `prev` must be). */
export function lastHash(txs: readonly Transaction[]): string {
  const last = txs[txs.length - 1];
  if (last === undefined) throw new Error('no transactions');
  return transactionHash(last);
}
