import type { State, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';

/** Checks that transaction `seq` is stamped no earlier than the log's last stamp and, outside elections, written by the leader of the current term. */
export function checkStamp(seq: number, tx: Transaction, state: State, findings: AuditFindings): void {
  if (tx.at < state.lastAt) findings.fail(seq, 'time', `transaction ${seq} is stamped ${tx.at}, before the log's last stamp ${state.lastAt}`);
  if (tx.kind !== 'election' && state.leader !== null && (tx.term !== state.term || tx.leader !== state.leader)) {
    findings.fail(seq, 'fencing', `transaction ${seq} was written by ${tx.leader} in term ${tx.term}, but ${state.leader} leads term ${state.term}`);
  }
}

/** Checks that election transaction `seq` holds one LeaderElected, for its writer and a term after the current one. */
export function checkElection(seq: number, tx: Transaction, state: State, findings: AuditFindings): void {
  const elected = tx.events[0];
  if (tx.events.length !== 1 || elected?.type !== 'LeaderElected') {
    findings.fail(seq, 'structure', `election transaction ${seq} must hold exactly one LeaderElected`);
  } else if (elected.term !== tx.term || elected.leader !== tx.leader) {
    findings.fail(seq, 'fencing', `LeaderElected in transaction ${seq} names ${elected.leader} term ${elected.term}, but the transaction was written by ${tx.leader} term ${tx.term}`);
  } else if (elected.term <= state.term) {
    findings.fail(seq, 'fencing', `LeaderElected in transaction ${seq} is for term ${elected.term}, not after term ${state.term}`);
  }
}
