import { parseDecisionMsgId } from '@muster/core';

/**
 * Where a message on MUSTER_DECISIONS comes in a leader's publishing, from its msg id
 * `muster:<logSeq>:<index>[:<node>]`: its log sequence, event index and node ('' for a decision,
 * which goes before its binds and stops; those go in node order).
 */
export type PublishOrder = readonly [number, number, string];

/** The publishing order of a decision msg id, or null for an id not of that form. */
function publishOrderOf(msgId: string): PublishOrder | null {
  const id = parseDecisionMsgId(msgId);
  return id === null ? null : [id.logSeq, id.index, id.node ?? ''];
}

/** Negative when `a` is published before `b`, positive after, 0 for the same message. */
function comparePublishOrder(a: PublishOrder, b: PublishOrder): number {
  return a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
}

/** The later in publishing order of `last` and the message `msgId` (an id not of the form leaves `last`). */
export function laterPublished(last: PublishOrder | null, msgId: string): PublishOrder | null {
  const order = publishOrderOf(msgId);
  return order !== null && (last === null || comparePublishOrder(order, last) > 0) ? order : last;
}

/** Whether `msgId` comes before `last` in publishing order: not on the stream, it is missing, not in flight. */
export function publishedBefore(msgId: string, last: PublishOrder | null): boolean {
  const order = publishOrderOf(msgId);
  return order !== null && last !== null && comparePublishOrder(order, last) < 0;
}

/** A stored decision's log sequence: its `Muster-Log-Seq` header, else its msg id's. */
export function decisionLogSeq(m: { logSeq: number | null; msgId: string }): number | null {
  return m.logSeq ?? publishOrderOf(m.msgId)?.[0] ?? null;
}
