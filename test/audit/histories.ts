// Golden histories for tests: loading them, and making altered copies (an event changed, a
// transaction removed, the chain re-computed as a forger would).
import { readFileSync, readdirSync } from 'node:fs';
import { readHistoryFile } from '@muster/auditor';
import type { OfflineHistory } from '@muster/auditor';
import { makeTransaction, transactionHash } from '@muster/core';
import type { Input, LoggedTransaction, Stamp, Transaction } from '@muster/core';

/** Where the golden histories live. */
export const HISTORIES_DIR = new URL('../fixtures/histories/', import.meta.url).pathname;

/** What a golden history is expected to replay to (written by scripts/recordHistory.ts). */
export interface Expected {
  name: string;
  stateSchema: number;
  stateHash: string;
  lastSeq: number;
  transactions: number;
  events: number;
  inputs: number;
  kinds: Record<string, number>;
  sessions: number;
  decisions: { committed: number; aborted: number };
}

/** A golden history in memory: its log, inputs and expectation. */
export interface Golden {
  name: string;
  path: string;
  log: LoggedTransaction[];
  inputs: Input[];
  expected: Expected;
}

/** Every golden history, by name order. */
export function goldenHistories(): Golden[] {
  return readdirSync(HISTORIES_DIR)
    .filter((f) => f.endsWith('.expected.json'))
    .sort()
    .map((f) => golden(f.slice(0, -'.expected.json'.length)));
}

/** One golden history by name. */
export function golden(name: string): Golden {
  const path = `${HISTORIES_DIR}${name}.jsonl`;
  const history = readHistoryFile(path);
  return {
    name,
    path,
    log: [...(history.transactions as Iterable<LoggedTransaction>)],
    inputs: [...(history.inputs ?? [])],
    expected: JSON.parse(readFileSync(`${HISTORIES_DIR}${name}.expected.json`, 'utf8')) as Expected,
  };
}

/** An offline history of a log, with or without its inputs. */
export function offline(log: readonly LoggedTransaction[], inputs?: readonly Input[]): OfflineHistory {
  return inputs === undefined ? { transactions: log } : { transactions: log, inputs };
}

/** A deep copy of a log, safe to alter. */
export function copyLog(log: readonly LoggedTransaction[]): LoggedTransaction[] {
  return structuredClone(log) as LoggedTransaction[];
}

/** Re-computes every `prev` from `fromIndex` on, as someone re-writing history would. */
export function rechain(log: LoggedTransaction[], fromIndex = 0): LoggedTransaction[] {
  for (let i = Math.max(1, fromIndex); i < log.length; i++) log[i]!.tx.prev = transactionHash(log[i - 1]!.tx);
  if (fromIndex === 0 && log.length > 0) log[0]!.tx.prev = null;
  return log;
}

/** A transaction that follows `last` (its prev is last's hash). */
export function following(last: LoggedTransaction, stamp: Stamp, events: Transaction['events']): LoggedTransaction {
  return { seq: last.seq + 1, tx: makeTransaction(transactionHash(last.tx), stamp, events) };
}
