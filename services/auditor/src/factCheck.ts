import { fold, retireProblem } from '@muster/core';
import type { JobsRetired, State, Transaction } from '@muster/core';
import type { AuditFindings } from './auditFindings.ts';
import { openedState } from './openedState.ts';
import type { Rederiver } from './rederiver.ts';

/**
 * Checks fact transaction `seq` while folding it onto `state`, and returns the state after it: its
 * heartbeat losses are each re-derived by the turn on the state the events before them left, its
 * retirements (the leader's to time) checked by the retirement rules, and a new log's policy
 * defaults re-derived by the turn's start.
 */
export function checkFact(seq: number, tx: Transaction, state: State, findings: AuditFindings, rederiver: Rederiver): State {
  const events = tx.events;
  let after = openedState(state, seq, tx);
  let i = 0;
  while (i < events.length) {
    const first = events[i]!;
    if (first.type === 'JobsRetired') {
      checkRetired(seq, tx, after, first, findings);
      after = fold(after, [first]);
      i++;
      continue;
    }
    if (first.type === 'PolicySet' && first.inputSeq === undefined) {
      // only a new log's start writes a policy of its own: the v1.1 defaults, and since contract
      // v1.2 the ContractSet after it; a log started before v1.2 has the policy alone
      const to = events[i + 1]?.type === 'ContractSet' ? i + 2 : i + 1;
      const derived = rederiver.events(seq, after, tx, [{ start: true }]);
      rederiver.divergences.compare(seq, tx, derived === null ? null : derived.slice(0, to - i), i, to);
      after = fold(after, events.slice(i, to));
      i = to;
      continue;
    }
    if (first.type !== 'NodeLost' || first.cause !== 'heartbeat' || first.inputSeq !== undefined) {
      findings.fail(seq, 'structure', `event ${i} (${first.type}) of fact transaction ${seq} is not a heartbeat NodeLost or one of its consequences`);
      after = fold(after, events.slice(i));
      break;
    }
    let to = i + 1;
    while (to < events.length && events[to]!.type !== 'NodeLost') to++;
    rederiver.check(seq, after, tx, [{ lostNodes: [first.nodeId] }], i, to);
    after = fold(after, events.slice(i, to));
    i = to;
  }
  return after;
}

/** A retirement is the leader's to time, but each job in it must be finished long enough and hold nothing. */
function checkRetired(seq: number, tx: Transaction, before: State, event: JobsRetired, findings: AuditFindings): void {
  if (event.at !== tx.at) findings.fail(seq, 'fact', `JobsRetired in transaction ${seq} is stamped ${event.at}, not the transaction's ${tx.at}`);
  for (const id of event.jobIds) {
    const problem = retireProblem(before, id, event.at, event.retainMs);
    if (problem !== null) findings.fail(seq, 'fact', `JobsRetired in transaction ${seq}: ${problem}`);
  }
}
