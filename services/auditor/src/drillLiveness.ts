import type { InputMessage } from '@muster/bus';
import { decide, fold, foldTransactions, ingest, initialState, isDecision } from '@muster/core';
import type { LoggedTransaction, State } from '@muster/core';

/** A stretch without any decision, longer than the bound, while work that fits was waiting. */
export interface LivenessViolation {
  /** Stamped time of the decision before the gap (or the start of the period), ms since the epoch. */
  from: number;
  /** Stamped time of the decision that ended it (or the end of the period). */
  to: number;
  ms: number;
  /** Jobs a session would have committed `boundMs` before the gap ended. */
  fitting: string[];
}

/** The liveness check's result. */
export interface LivenessResult {
  boundMs: number;
  /** The longest stretch between decisions within the period, whether or not work was waiting. */
  longestGapMs: number;
  /** Gaps longer than the bound that were examined. */
  longGaps: number;
  violations: LivenessViolation[];
}

/**
 * Finds every gap between decisions longer than `boundMs` within the period and asks the core
 * whether work that fits was waiting `boundMs` before the gap ended: the log's state at that
 * time, plus every input already stored in MUSTER_IN but not yet ingested, folded through the
 * same `ingest`, then one `decide`. If that session would commit a gang, the work waited longer
 * than the bound: a violation. (Inputs only add work or free resources, and only decisions take
 * resources, so work that fits at that time fitted for the rest of the gap.)
 */
export function checkLiveness(
  log: readonly LoggedTransaction[],
  inputs: readonly InputMessage[],
  period: { from: number; to: number },
  boundMs: number,
): LivenessResult {
  const decisionTimes = log.filter((l) => l.tx.events.some(isDecision)).map((l) => l.tx.at);
  const marks = [period.from, ...decisionTimes.filter((t) => t > period.from && t < period.to), period.to];
  const result: LivenessResult = { boundMs, longestGapMs: 0, longGaps: 0, violations: [] };
  let state = initialState();
  let folded = 0;
  for (let i = 1; i < marks.length; i++) {
    const from = marks[i - 1] as number;
    const to = marks[i] as number;
    result.longestGapMs = Math.max(result.longestGapMs, to - from);
    if (to - from <= boundMs) continue;
    result.longGaps++;
    const at = to - boundMs;
    const batch: LoggedTransaction[] = [];
    while (folded < log.length && (log[folded] as LoggedTransaction).tx.at <= at) batch.push(log[folded++] as LoggedTransaction);
    state = foldTransactions(state, batch);
    const fitting = fittingAt(state, inputs, at);
    if (fitting.length > 0) result.violations.push({ from, to, ms: to - from, fitting });
  }
  return result;
}

/** The jobs one session would commit at `at` if every input stored by then had been ingested. */
function fittingAt(logState: State, inputs: readonly InputMessage[], at: number): string[] {
  let state = logState;
  for (const input of inputs) {
    if (input.seq <= logState.lastInputSeq || (input.storedAt ?? Number.POSITIVE_INFINITY) > at) continue;
    state = fold(state, ingest(state, { seq: input.seq, subject: input.subject, data: input.data }, Math.max(at, state.lastAt)));
  }
  const jobs: string[] = [];
  for (const part of decide(state, Math.max(at, state.lastAt))) {
    for (const event of part) if (event.type === 'GangCommitted') jobs.push(event.jobId);
  }
  return jobs;
}
