// Reading what a scheduler wrote, for tests: the whole log, replayed state, decisions per job.
import { produce } from 'immer';
import { DECISIONS_STREAM, jetStream, readLog } from '@muster/bus';
import type { NatsConnection } from '@muster/bus';
import { applyTransaction, initialState } from '@muster/core';
import type { LoggedTransaction, State } from '@muster/core';
import { jetstreamManager } from '@nats-io/jetstream';

/** Every transaction of MUSTER_LOG, hash chain verified. */
export async function readWholeLog(nc: NatsConnection): Promise<LoggedTransaction[]> {
  const out: LoggedTransaction[] = [];
  for await (const logged of readLog(jetStream(nc))) out.push(logged);
  return out;
}

/** The state a fresh replay of the log gives. */
export function replay(log: readonly LoggedTransaction[]): State {
  return produce(initialState(), (draft) => {
    for (const { seq, tx } of log) applyTransaction(draft, seq, tx);
  });
}

/** Every message on MUSTER_DECISIONS, with subject and parsed body. */
export async function readDecisionStream(nc: NatsConnection): Promise<{ subject: string; body: Record<string, unknown>; msgId: string }[]> {
  const jsm = await jetstreamManager(nc);
  const last = (await jsm.streams.info(DECISIONS_STREAM)).state.last_seq;
  const out: { subject: string; body: Record<string, unknown>; msgId: string }[] = [];
  for (let seq = 1; seq <= last; seq++) {
    const m = await jsm.streams.getMessage(DECISIONS_STREAM, { seq }).catch(() => null);
    if (m === null) continue;
    out.push({ subject: m.subject, body: m.json<Record<string, unknown>>(), msgId: m.header.get('Nats-Msg-Id') });
  }
  return out;
}
