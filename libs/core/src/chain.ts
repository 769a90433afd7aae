import type { SchedulerEvent } from './events.ts';
import type { Transaction, TransactionKind } from './envelope.ts';

/** Who writes and when: the parts of an envelope that are not its events. */
export interface Stamp {
  kind: TransactionKind;
  term: number;
  leader: string;
  at: number;
  session: number;
  part?: number;
  parts?: number;
}

/** Builds a transaction envelope that follows the transaction whose hash is `prev`. */
export function makeTransaction(prev: string | null, stamp: Stamp, events: SchedulerEvent[]): Transaction {
  return {
    v: 1,
    kind: stamp.kind,
    term: stamp.term,
    leader: stamp.leader,
    at: stamp.at,
    prev,
    session: stamp.session,
    part: stamp.part ?? 1,
    parts: stamp.parts ?? 1,
    events,
  };
}
