import { isDecision } from '@muster/core';
import type { LoggedTransaction } from '@muster/core';
import type { FaultRecord } from './drillFaultRecord.ts';
import type { FaultKind } from './faults/index.ts';
import { spread } from './drillTakeover.ts';
import type { Spread, Takeover } from './drillTakeover.ts';

/** The numbers of one fault kind: how often, how long takeovers took and whose time it was, and what went wrong while it acted. */
export interface KindNumbers {
  kind: FaultKind;
  injected: number;
  skipped: number;
  errors: number;
  /** Fault to the first decision by another replica (leader faults), and its split: JetStream's recovery, and muster's own time. */
  takeover: { total: Spread; jetStream: Spread; muster: Spread };
  /** Time inside this kind's windows (from each fault to the next fault, or to 10 s after it ended), ms. */
  windowMs: number;
  /** Accepted jobs committed inside those windows, and the rate. */
  committed: number;
  committedRate: number;
  /** The longest stretch without a decision inside a window, ms. */
  longestGapMs: number;
  /** Findings whose log sequence falls inside a window of this kind (they must all be 0). */
  lost: number;
  duplicated: number;
  contradicted: number;
  overcommit: number;
}

/** The findings of a drill that name log sequences, by check. */
export interface DrillFindings {
  lost: readonly string[];
  duplicated: readonly string[];
  contradicted: readonly string[];
  overcommit: readonly string[];
}

const AFTER_MS = 10_000;

/**
 * Numbers per fault kind: each fault's window runs from its injection to the next fault's (or to
 * 10 s after it ended, whichever is first), and a finding counts for the kinds whose windows hold
 * the stamped time of the log transaction it names (`log N`, `muster:N:…`); in a chaotic run the
 * windows overlap and a finding counts for each.
 */
export function numbersByKind(faults: readonly FaultRecord[], takeovers: readonly Takeover[], log: readonly LoggedTransaction[], findings: DrillFindings, accepted: ReadonlySet<string>): KindNumbers[] {
  const sorted = [...faults].sort((a, b) => a.at - b.at);
  const windows = sorted
    .filter((f) => f.skipped === null)
    .map((f) => {
      const next = sorted.find((g) => g.at > f.at && g.skipped === null);
      return { kind: f.kind, from: f.at, to: Math.min(next?.at ?? Number.POSITIVE_INFINITY, Math.max(f.endedAt, f.at) + AFTER_MS) };
    });
  const atOf = new Map(log.map((l) => [l.seq, l.tx.at]));
  const seqOf = (line: string): number | null => {
    const m = /(?:log |muster:)(\d+)/.exec(line);
    return m === null ? null : Number(m[1]);
  };
  const kinds = [...new Set(faults.map((f) => f.kind))];
  return kinds.map((kind) => {
    const mine = windows.filter((w) => w.kind === kind);
    const inside = (at: number | undefined): boolean => at !== undefined && mine.some((w) => at >= w.from && at <= w.to);
    const count = (lines: readonly string[]): number =>
      lines.filter((l) => {
        const seq = seqOf(l);
        return seq !== null && inside(atOf.get(seq));
      }).length;
    let committed = 0;
    let longestGapMs = 0;
    for (const w of mine) {
      let last = w.from;
      for (const { tx } of log) {
        if (tx.at < w.from || tx.at > w.to || !tx.events.some(isDecision)) continue;
        longestGapMs = Math.max(longestGapMs, tx.at - last);
        last = tx.at;
        for (const e of tx.events) if (e.type === 'GangCommitted' && accepted.has(e.jobId)) committed++;
      }
      if (Number.isFinite(w.to)) longestGapMs = Math.max(longestGapMs, Math.min(w.to, log[log.length - 1]?.tx.at ?? w.to) - last);
    }
    const windowMs = mine.reduce((ms, w) => ms + (Number.isFinite(w.to) ? w.to - w.from : 0), 0);
    const t = takeovers.filter((x) => x.kind === kind);
    const ofKind = faults.filter((f) => f.kind === kind);
    return {
      kind,
      injected: ofKind.filter((f) => f.skipped === null).length,
      skipped: ofKind.filter((f) => f.skipped !== null).length,
      errors: ofKind.filter((f) => f.error !== null).length,
      takeover: { total: spread(t.map((x) => x.decisionMs)), jetStream: spread(t.map((x) => x.jetStreamMs)), muster: spread(t.map((x) => x.musterMs)) },
      windowMs,
      committed,
      committedRate: windowMs === 0 ? 0 : Math.round((committed * 10_000) / windowMs) / 10,
      longestGapMs,
      lost: count(findings.lost),
      duplicated: count(findings.duplicated),
      contradicted: count(findings.contradicted),
      overcommit: count(findings.overcommit),
    };
  });
}
