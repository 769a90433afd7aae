import type { PublishedDecision } from '@muster/bus';
import type { Transaction } from '@muster/core';
import { derivedMessages } from './publishedEvidence.ts';

/**
 * The log sequences `tail` (MUSTER_DECISIONS' last messages, oldest first) can say are published
 * in full or not: from its first message's (from its lowest when the tail is the whole stream) up
 * to its highest; null when it is empty.
 */
export function judgedRange(tail: readonly PublishedDecision[]): { from: number; to: number } | null {
  if (tail.length === 0) return null;
  let lowest = Infinity;
  let highest = 0;
  for (const d of tail) {
    lowest = Math.min(lowest, d.logSeq);
    highest = Math.max(highest, d.logSeq);
  }
  return { from: tail[0]!.streamSeq === 1 ? lowest : tail[0]!.logSeq, to: highest };
}

/**
 * The first log sequence whose decisions may be missing from MUSTER_DECISIONS, judged from its
 * last messages (`tail`, oldest first) and the log's transactions over `judgedRange(tail)` (`txs`;
 * one not given counts as missing): the first in that range with a message not in the tail, else
 * the one after the highest (1 when nothing was published). The first message's transaction is
 * judged from it on: its messages go out in their order, those before it may lie before the tail.
 * A leader publishes in calls of at most half the tail a successor reads, each once the one before
 * was acked, and after a failed call only what is owed from its first, so a hole left by a leader
 * that died lies in its last call, inside that range: a successor resuming after the last decision
 * published (as before) never filled it.
 */
export function firstOwed(tail: readonly PublishedDecision[], txs: ReadonlyMap<number, Transaction>): number {
  const range = judgedRange(tail);
  if (range === null) return 1;
  const published = new Set(tail.map((d) => d.msgId));
  const first = tail[0]!;
  for (let seq = range.from; seq <= range.to; seq++) {
    const tx = txs.get(seq);
    if (tx === undefined) return seq;
    let derived = derivedMessages(seq, tx);
    if (seq === first.logSeq && first.streamSeq !== 1) derived = derived.slice(derived.findIndex((m) => m.msgId === first.msgId) + 1);
    if (derived.some((m) => !published.has(m.msgId))) return seq;
  }
  return range.to + 1;
}
