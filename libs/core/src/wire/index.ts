// The wire contract (DESIGN.md §2, §3): subjects, msg ids and size limits, each declared once.
export { idOf, nodeInputOf, queueSetOf, subjects } from './subjects.ts';
export type { NodeInputKind } from './subjects.ts';
export { decisionMsgId, parseDecisionMsgId } from './msgIds.ts';
export type { DecisionMsgId } from './msgIds.ts';
export { MAX_PAYLOAD_BYTES, MAX_TRANSACTION_BYTES } from './limits.ts';
