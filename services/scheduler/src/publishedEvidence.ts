import { BusError, DECISIONS_STREAM, readDecisionBatches, streamInfo } from '@muster/bus';
import type { Bus, PublishedDecision } from '@muster/bus';
import { canonicalJson, decisionMessages } from '@muster/core';
import type { OutboundMessage, Transaction } from '@muster/core';

/**
 * How many of MUSTER_DECISIONS' last messages a replica judges against the log before it leads:
 * the last one alone is not enough once a leader has published on a log that lost writes (its own
 * decisions, which the shrunk log backs, come last; those of the lost history lie below them).
 */
export const PUBLISHED_TAIL = 256;

/**
 * The last `n` messages of MUSTER_DECISIONS (a few more if it grows while read), oldest first, or
 * none when it is empty: one stream info and one ordered read of at most `n` small messages.
 */
export async function publishedTail(bus: Bus, n = PUBLISHED_TAIL): Promise<PublishedDecision[]> {
  const { lastSeq } = await streamInfo(bus, DECISIONS_STREAM);
  if (lastSeq === 0) return [];
  const out: PublishedDecision[] = [];
  const batches = readDecisionBatches(bus, { fromSeq: Math.max(1, lastSeq - n + 1), batch: n });
  let done = false;
  try {
    // up to the last sequence seen above, not to the reader's end: its consumer is deleted after
    // this returns (a round trip a takeover need not wait for)
    while (out.length === 0 || out[out.length - 1]!.streamSeq < lastSeq) {
      const next = await batches.next();
      if (next.done === true) {
        done = true;
        break;
      }
      for (const m of next.value) {
        if (m.logSeq === null) throw new BusError('BAD_MESSAGE', `${DECISIONS_STREAM} sequence ${m.seq} has no valid Muster-Log-Seq header`, { seq: m.seq });
        out.push({ streamSeq: m.seq, logSeq: m.logSeq, msgId: m.msgId, subject: m.subject, data: m.data });
      }
    }
  } finally {
    if (!done) void batches.return(undefined).catch(() => undefined);
  }
  return out;
}

/**
 * What a message of MUSTER_DECISIONS says about MUSTER_LOG, or null when it agrees with it. A
 * leader publishes a decision only after the log acknowledged its transaction, so a decision that
 * names a log sequence past `logEnd` (the log's end, read after the decision), or one that differs
 * from what the log's transaction at its sequence derives (`derived`: its `derivedMessages`, null
 * when the log holds no transaction there), means the log lost acknowledged writes (and, for the
 * second, was written again over them): a replica must not lead on it.
 */
export function publishedEvidence(d: PublishedDecision, logEnd: number, derived: readonly OutboundMessage[] | null): string | null {
  const what = `MUSTER_DECISIONS holds ${d.msgId} (stream sequence ${d.streamSeq}, ${d.subject}), a decision of log sequence ${d.logSeq}`;
  if (d.logSeq > logEnd) return `${what}, but MUSTER_LOG ends at ${logEnd}: the log lost acknowledged writes`;
  if (derived === null) return `${what}, but MUSTER_LOG has no transaction there (its end is ${logEnd}): the log lost acknowledged writes`;
  const message = derived.find((m) => m.msgId === d.msgId);
  if (message === undefined) return `${what}, but MUSTER_LOG's transaction at ${d.logSeq} derives no such message: the log lost acknowledged writes and was written again`;
  let body: unknown;
  try {
    body = JSON.parse(d.data);
  } catch {
    body = d.data;
  }
  if (message.subject !== d.subject || canonicalJson(withoutJobDetails(body)) !== canonicalJson(withoutJobDetails(message.payload))) {
    return `${what}, but it differs from what MUSTER_LOG's transaction at ${d.logSeq} derives: the log lost acknowledged writes and was written again`;
  }
  return null;
}

/**
 * The messages the log's transaction `tx` at `logSeq` leads to, without its jobs: what they add to
 * a Bind (run time, command, env) is left out of `publishedEvidence`'s comparison.
 */
export function derivedMessages(logSeq: number, tx: Transaction): OutboundMessage[] {
  return decisionMessages(logSeq, tx, () => undefined);
}

/** A Bind without what its job adds (the job may be retired by now): its run time, its gang's layout (contract v1.2), and each part's command and env. */
function withoutJobDetails(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || (body as { type?: unknown }).type !== 'Bind') return body;
  const { runtimeMs: _r, gang: _g, parts, ...rest } = body as { runtimeMs?: unknown; gang?: unknown; parts?: unknown };
  if (!Array.isArray(parts)) return rest;
  return { ...rest, parts: parts.map((p: unknown) => {
    if (typeof p !== 'object' || p === null) return p;
    const { command: _c, env: _e, ...part } = p as Record<string, unknown>;
    return part;
  }) };
}
