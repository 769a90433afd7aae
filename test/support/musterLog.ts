// Reading what a scheduler wrote, for tests: the whole log, replayed state, decisions per job.
import { produce } from 'immer';
import { readDecisions, readLog } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { applyTransaction, initialState } from '@muster/core';
import type { LoggedTransaction, State } from '@muster/core';

/** Every transaction of MUSTER_LOG, hash chain verified. */
export async function readWholeLog(bus: Bus): Promise<LoggedTransaction[]> {
  const out: LoggedTransaction[] = [];
  for await (const logged of readLog(bus)) out.push(logged);
  return out;
}

/** The state a fresh replay of the log gives. */
export function replay(log: readonly LoggedTransaction[]): State {
  return produce(initialState(), (draft) => {
    for (const { seq, tx } of log) applyTransaction(draft, seq, tx);
  });
}

/** Every message on MUSTER_DECISIONS, with subject and parsed body. */
export async function readDecisionStream(bus: Bus): Promise<{ subject: string; body: Record<string, unknown>; msgId: string }[]> {
  const out: { subject: string; body: Record<string, unknown>; msgId: string }[] = [];
  for await (const m of readDecisions(bus)) out.push({ subject: m.subject, body: JSON.parse(m.data) as Record<string, unknown>, msgId: m.msgId });
  return out;
}
