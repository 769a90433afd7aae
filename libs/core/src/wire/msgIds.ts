// The msg id of every message a leader publishes on MUSTER_DECISIONS (DESIGN.md §2), built and
// parsed here only: `muster:<logSeq>:<index>` for a decision, `muster:<logSeq>:<index>:<node>` for
// a bind or a stop, where index is the event's position in its log transaction.

/** What a decision message's msg id names: the log transaction, the event in it, and the node (null for a decision). */
export interface DecisionMsgId {
  logSeq: number;
  index: number;
  node: string | null;
}

const MSG_ID = /^muster:(\d+):(\d+)(?::(.+))?$/;

/** The msg id of the message derived from event `index` of log transaction `logSeq` (for `node`'s bind or stop when given). */
export function decisionMsgId(logSeq: number, index: number, node?: string): string {
  return node === undefined ? `muster:${logSeq}:${index}` : `muster:${logSeq}:${index}:${node}`;
}

/** The parts of a decision message's msg id, or null for an id not of that form. */
export function parseDecisionMsgId(msgId: string): DecisionMsgId | null {
  const match = MSG_ID.exec(msgId);
  return match === null ? null : { logSeq: Number(match[1]), index: Number(match[2]), node: match[3] ?? null };
}
