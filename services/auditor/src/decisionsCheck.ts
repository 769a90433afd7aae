import { decisionLogSeq, laterPublished, publishedBefore } from '@muster/bus';
import type { PublishOrder, StoredDecision } from '@muster/bus';
import { ByteScratch, canonicalDigest } from '@muster/core';
import type { OutboundMessage } from '@muster/core';
import type { DecisionsStreamReport, Failure } from './auditReport.ts';
import { sameJson } from './eventDiff.ts';

/**
 * Compares what MUSTER_DECISIONS holds with the messages the log derives (`decisionMessages` of
 * each transaction), by msg id, as both arrive: the stream from its reader, the derived messages
 * from the replay. What is left on either side at the end is missing, in flight or unexpected.
 */
export class DecisionsCheck {
  private readonly stored = new Map<string, StoredDecision>();
  private readonly expected = new Map<string, OutboundMessage>();
  private readonly matched = new Set<string>();
  // the last message read, in the order a leader publishes (log sequence, event, node)
  private lastPublished: PublishOrder | null = null;
  private readonly counts = { checked: 0, missing: 0, mismatched: 0, inFlight: 0, unexpected: 0, duplicated: 0 };
  // messages stored twice, judged at the end (those after the last sequence audited are not)
  private readonly twice: { logSeq: number | null; msg: StoredDecision }[] = [];
  private readonly scratch = new ByteScratch();

  /**
   * `fromSeq`: the first log sequence judged; `unsequenced`: whether messages that name no log
   * sequence are judged here (false in the later range of a parallel audit: the first range's).
   */
  constructor(
    private readonly fromSeq: number,
    private readonly onFailure: (f: Failure) => void,
    private readonly unsequenced = true,
  ) {}

  /** One message read from the stream. */
  fromStream(msg: StoredDecision): void {
    this.lastPublished = laterPublished(this.lastPublished, msg.msgId);
    const logSeq = decisionLogSeq(msg);
    if (logSeq === null ? !this.unsequenced : logSeq < this.fromSeq) return;
    if (this.matched.has(msg.msgId) || this.stored.has(msg.msgId)) {
      this.twice.push({ logSeq, msg });
      return;
    }
    const derived = this.expected.get(msg.msgId);
    if (derived === undefined) {
      this.stored.set(msg.msgId, msg);
      return;
    }
    this.expected.delete(msg.msgId);
    this.compare(derived, msg);
  }

  /** The messages one logged transaction derives. */
  fromLog(msgs: readonly OutboundMessage[]): void {
    for (const m of msgs) {
      const found = this.stored.get(m.msgId);
      if (found === undefined) {
        this.expected.set(m.msgId, m);
        continue;
      }
      this.stored.delete(m.msgId);
      this.compare(m, found);
    }
  }

  /** Settles what is left once both sides are read; stream messages for sequences after `lastSeq` are not judged. */
  finish(lastSeq: number): DecisionsStreamReport {
    for (const { logSeq, msg } of this.twice) {
      if (logSeq !== null && logSeq > lastSeq) continue;
      this.counts.duplicated++;
      this.fail(logSeq ?? 0, `${msg.msgId} is stored twice on MUSTER_DECISIONS (stream sequence ${msg.seq}): a decision was published again outside the dedupe window`);
    }
    this.twice.length = 0;
    for (const m of this.expected.values()) {
      // not before the last message read in publishing order: not published yet (a live leader
      // publishes a big transaction over several calls), not missing
      if (!publishedBefore(m.msgId, this.lastPublished)) {
        this.counts.inFlight++;
        continue;
      }
      this.counts.missing++;
      this.fail(m.logSeq, `${m.msgId} (${m.subject}) follows from the log but is not on MUSTER_DECISIONS, though later decisions are`);
    }
    for (const msg of this.stored.values()) {
      const logSeq = decisionLogSeq(msg);
      if (logSeq !== null && logSeq > lastSeq) continue;
      this.counts.unexpected++;
      this.fail(logSeq ?? 0, `${msg.msgId === '' ? `stream sequence ${msg.seq}` : msg.msgId} (${msg.subject}) is on MUSTER_DECISIONS but the log derives no such message`);
    }
    this.expected.clear();
    this.stored.clear();
    return { available: true, ...this.counts };
  }

  private compare(derived: OutboundMessage, msg: StoredDecision): void {
    this.matched.add(derived.msgId);
    // a leader publishes canonical JSON: the same bytes are the same body
    if (msg.bytes !== undefined && msg.subject === derived.subject && canonicalDigest(derived.payload, (bytes) => Buffer.compare(bytes, msg.bytes!) === 0, this.scratch)) {
      this.counts.checked++;
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(msg.data);
    } catch {
      body = msg.data;
    }
    if (msg.subject === derived.subject && sameJson(body, derived.payload)) {
      this.counts.checked++;
      return;
    }
    this.counts.mismatched++;
    const what = msg.subject === derived.subject ? `its body differs from the log's ${JSON.stringify(derived.payload)}` : `it went to ${msg.subject}, not ${derived.subject}`;
    this.fail(derived.logSeq, `${derived.msgId} on MUSTER_DECISIONS contradicts the log: ${what}`);
  }

  private fail(seq: number, message: string): void {
    this.onFailure({ seq, check: 'decisions-stream', message });
  }
}
