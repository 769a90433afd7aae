import type { InputMessage } from '@muster/bus';
import { TurnContext, foldTransactions, initialState, isDecision, turn } from '@muster/core';
import type { LoggedTransaction, State, TurnCommand } from '@muster/core';
import { overlapMs } from './drillNatsWatch.ts';
import type { Interval } from './drillNatsWatch.ts';

/** A stretch without any decision, longer than the bound, while work that fits was waiting. */
export interface LivenessViolation {
  /** Stamped time of the decision before the gap (or the start of the period), ms since the epoch. */
  from: number;
  /** Stamped time of the decision that ended it (or the end of the period). */
  to: number;
  ms: number;
  /** The part of the gap when JetStream could serve muster's streams: what the scheduler answers for. */
  attributableMs: number;
  /** Jobs a session would have committed when the attributable wait began. */
  fitting: string[];
}

/** The liveness check's result. */
export interface LivenessResult {
  boundMs: number;
  /** The longest stretch between decisions within the period, whether or not work was waiting. */
  longestGapMs: number;
  /** The longest such stretch, less the time JetStream was unavailable during it. */
  longestAttributableMs: number;
  /** Gaps whose attributable part was longer than the bound: each was examined for work that fits. */
  longGaps: number;
  violations: LivenessViolation[];
}

/**
 * Finds every gap between decisions that lasted longer than `boundMs` while JetStream was
 * available (time in `excused`, when it could not serve muster's streams, does not count), and
 * asks the core whether work that fits was waiting when those `boundMs` began: the log's state
 * at that time, plus every input already stored in MUSTER_IN but not yet ingested, taken by one
 * turn of the core with a session, as a leader at that time would have. If that session would commit a gang, the work waited
 * longer than the bound: a violation. (Inputs only add work or free resources, and only decisions
 * take resources, so work that fits at that time fitted for the rest of the gap.)
 */
export function checkLiveness(
  log: readonly LoggedTransaction[],
  inputs: readonly InputMessage[],
  period: { from: number; to: number },
  boundMs: number,
  excused: readonly Interval[] = [],
): LivenessResult {
  const decisionTimes = log.filter((l) => l.tx.events.some(isDecision)).map((l) => l.tx.at);
  const marks = [period.from, ...decisionTimes.filter((t) => t > period.from && t < period.to), period.to];
  const result: LivenessResult = { boundMs, longestGapMs: 0, longestAttributableMs: 0, longGaps: 0, violations: [] };
  let state = initialState();
  let folded = 0;
  for (let i = 1; i < marks.length; i++) {
    const from = marks[i - 1] as number;
    const to = marks[i] as number;
    const attributableMs = to - from - overlapMs(from, to, excused);
    result.longestGapMs = Math.max(result.longestGapMs, to - from);
    result.longestAttributableMs = Math.max(result.longestAttributableMs, attributableMs);
    const at = attributableMs > boundMs ? waitBegan(from, to, boundMs, excused) : null;
    if (at === null) continue;
    result.longGaps++;
    const batch: LoggedTransaction[] = [];
    while (folded < log.length && (log[folded] as LoggedTransaction).tx.at <= at) batch.push(log[folded++] as LoggedTransaction);
    state = foldTransactions(state, batch);
    const fitting = fittingAt(state, inputs, at);
    if (fitting.length > 0) result.violations.push({ from, to, ms: to - from, attributableMs, fitting });
  }
  return result;
}

/** The latest time in [from, to] from which `boundMs` of time outside `excused` pass before `to`, or null. */
function waitBegan(from: number, to: number, boundMs: number, excused: readonly Interval[]): number | null {
  const clipped = excused
    .map((i) => ({ from: Math.max(i.from, from), to: Math.min(i.to, to) }))
    .filter((i) => i.to > i.from)
    .sort((a, b) => b.to - a.to);
  let need = boundMs;
  let cursor = to;
  for (const i of clipped) {
    if (i.to < cursor) {
      const free = cursor - i.to;
      if (free >= need) return cursor - need;
      need -= free;
    }
    cursor = Math.min(cursor, i.from);
  }
  return cursor - from >= need ? cursor - need : null;
}

/** The jobs one session would commit at `at` if every input stored by then had been ingested in the same turn. */
function fittingAt(logState: State, inputs: readonly InputMessage[], at: number): string[] {
  const stored = inputs
    .filter((input) => input.seq > logState.lastInputSeq && (input.storedAt ?? Number.POSITIVE_INFINITY) <= at)
    .map((input) => ({ seq: input.seq, subject: input.subject, data: input.data }));
  const commands: TurnCommand[] = stored.length === 0 ? [{ session: true }] : [{ inputs: stored }, { session: true }];
  const result = turn(new TurnContext(), logState, null, commands, { term: logState.term, leader: 'liveness-check', at });
  const jobs: string[] = [];
  for (const { tx } of result.transactions) {
    for (const event of tx.events) if (event.type === 'GangCommitted') jobs.push(event.jobId);
  }
  return jobs;
}
