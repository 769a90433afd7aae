import type { SchedulerEvent } from '../events.ts';
import type { State } from '../state.ts';
import { runSession } from './runSession.ts';

/**
 * One scheduling session at stamped time `at`, when one is needed (else []): its events split
 * into transactions, the first beginning with `SessionStarted`. Each gang attempt stays in one
 * transaction and every transaction leaves the state consistent. Deterministic.
 */
export function decide(state: State, at: number): SchedulerEvent[][] {
  return runSession(state, at).parts;
}
