import { isDecision } from '@muster/core';
import type { LoggedTransaction } from '@muster/core';
import type { FaultRecord } from './drillFaultRecord.ts';
import { overlapMs } from './drillNatsWatch.ts';
import type { Interval } from './drillNatsWatch.ts';
import { drillFault } from './faults/index.ts';
import type { FaultKind } from './faults/index.ts';

/** One leader fault and what followed it in the log. */
export interface Takeover {
  fault: number;
  kind: FaultKind;
  /** The replica that was killed or paused. */
  from: string;
  /** The replica that made the first decision after the fault, or null if none did. */
  to: string | null;
  /** Fault to the first LeaderElected by another replica, ms (stamped times). */
  electedMs: number | null;
  /** Fault to the first decision by another replica, ms: the takeover time. */
  decisionMs: number | null;
  /** The part of the takeover when JetStream could not serve muster's streams (its own recovery), ms. */
  jetStreamMs: number | null;
  /** The rest: muster's own time (lease wait, catch-up, election, re-publishing, the first session), ms. */
  musterMs: number | null;
  /** Detection: fault to the lease won by the replica that decided first (its log's `took … lease`), ms; null when its log does not say. */
  detectionMs: number | null;
  /** Rebuild: lease won to that replica's LeaderElected (catch-up, the look at the published decisions and the log's end, the fenced append), ms. */
  rebuildMs: number | null;
  /** First decision: that replica's LeaderElected to its first decision (re-publishing, the first session), ms. */
  firstDecisionMs: number | null;
  /** Other faults whose time overlapped the takeover's (`<n> <kind>`). */
  overlapping: string[];
}

/** When a replica won the lease, from its log: the times (ms) it did, in order. */
export type LeaseWins = (replica: string) => readonly number[];

// how far a stamp may lead the clock (the StampClock's slack) and trail it (slow turns on a loaded machine) for a logged time to be believed
const STAMP_AHEAD_MS = 1_000;
const STAMP_BEHIND_MS = 30_000;

/** When a replica's elections landed, from its log: LeaderElected's sequence to the time (ms). */
export type ElectionTimes = (replica: string) => ReadonlyMap<number, number>;

/** Count, median, 99th percentile and maximum of some durations (nearest rank), null when there are none. */
export interface Spread {
  count: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

/**
 * For each leader fault (a kill, a pause, a partition, the fast clock's kill): the first
 * LeaderElected by another replica after the fault, and the first decision another replica
 * logged after that election. All processes run on one machine, so the drill's clock and the
 * replicas' are the same clock; but a stamp can trail it by seconds (a leader stamps a turn when it
 * starts, and its StampClock holds stamps to the log's time as it watched it pass, which lags when
 * turns are slow on a loaded machine: an election logged 500 ms after a pause was stamped before
 * it). So an election is timed by the line its replica logged when it landed (`elections`), and a
 * decision by that time plus the stamps' difference between the election and the decision (one
 * leader's stamps, on one clock); a stamp stands in only when the replica's log does not say.
 */
export function takeovers(
  faults: readonly FaultRecord[],
  log: readonly LoggedTransaction[],
  unavailable: readonly Interval[] = [],
  leaseWins: LeaseWins = () => [],
  elections: ElectionTimes = () => new Map(),
): Takeover[] {
  const out: Takeover[] = [];
  // a replica the fast-clock fault ran an hour ahead logs its own time: its lines are brought back by
  // the offset (its stamps are held to the log's time, so a stamp, trailing the kill it answered,
  // would hide its election, and the takeover would be the next replica's, tens of seconds later)
  const windows = faults.flatMap((f) => (f.fastClock === undefined ? [] : [f.fastClock]));
  const trueTime = (replica: string, logged: number): number => {
    const w = windows.find((c) => c.replica === replica && logged - c.aheadMs >= c.from - STAMP_AHEAD_MS && logged - c.aheadMs <= (c.to === 0 ? Number.POSITIVE_INFINITY : c.to + STAMP_AHEAD_MS));
    return w === undefined ? logged : logged - w.aheadMs;
  };
  // a line still far from the stamp is not believed
  const electedAt = (l: LoggedTransaction): number => {
    const raw = elections(l.tx.leader).get(l.seq);
    const logged = raw === undefined ? undefined : trueTime(l.tx.leader, raw);
    return logged !== undefined && logged >= l.tx.at - STAMP_AHEAD_MS && logged <= l.tx.at + STAMP_BEHIND_MS ? logged : l.tx.at;
  };
  for (const f of faults) {
    const hit = leaderHit(f);
    if (hit === null) continue;
    const { from, at } = hit;
    const elected = log.find((l) => l.tx.kind === 'election' && l.tx.leader !== from && electedAt(l) >= at);
    // the first elected may lose the log again before it decides: whoever decides first took over
    const decided = elected === undefined ? undefined : log.find((l) => l.seq > elected.seq && l.tx.leader !== from && l.tx.events.some(isDecision));
    const to = decided?.tx.leader ?? null;
    // the split, along the replica that decided first: its last election before that decision and its last lease won before that
    const ownElection = to === null || decided === undefined ? undefined : log.findLast((l) => l.seq < decided.seq && l.tx.kind === 'election' && l.tx.leader === to && electedAt(l) >= at);
    const decidedAt = decided === undefined ? null : ownElection === undefined ? decided.tx.at : electedAt(ownElection) + Math.max(0, decided.tx.at - ownElection.tx.at);
    const decisionMs = decidedAt === null ? null : decidedAt - at;
    const jetStreamMs = decisionMs === null ? null : overlapMs(at, at + decisionMs, unavailable);
    const won = to === null || decidedAt === null ? undefined : leaseWins(to).map((t) => trueTime(to, t)).findLast((t) => t >= at && t <= decidedAt);
    const end = decidedAt ?? Number.POSITIVE_INFINITY;
    out.push({
      fault: f.n,
      kind: hit.kind,
      from,
      to,
      electedMs: elected === undefined ? null : electedAt(elected) - at,
      decisionMs,
      jetStreamMs,
      musterMs: decisionMs === null || jetStreamMs === null ? null : decisionMs - jetStreamMs,
      detectionMs: won === undefined ? null : won - at,
      rebuildMs: won === undefined || ownElection === undefined ? null : Math.max(0, electedAt(ownElection) - won),
      firstDecisionMs: ownElection === undefined || decided === undefined ? null : Math.max(0, decided.tx.at - ownElection.tx.at),
      overlapping: faults.filter((g) => g !== f && g.skipped === null && g.at < end && g.endedAt > at).map((g) => `${g.n} ${g.kind}${g.target === null ? '' : ` ${g.target}`}`),
    });
  }
  return out;
}

// the leader a fault took down and when, or null when it did not hit one (its kind's module says)
function leaderHit(f: FaultRecord): { kind: FaultKind; from: string; at: number } | null {
  const hit = drillFault(f.kind).leaderHit?.(f) ?? null;
  return hit === null ? null : { kind: f.kind, ...hit };
}

/** The spread of the non-null values. */
export function spread(values: readonly (number | null)[]): Spread {
  const sorted = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  const rank = (p: number): number | null => (sorted.length === 0 ? null : (sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] as number));
  return { count: sorted.length, p50: rank(0.5), p99: rank(0.99), max: sorted.length === 0 ? null : (sorted[sorted.length - 1] as number) };
}
