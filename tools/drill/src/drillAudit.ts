import type { AuditReport } from '@muster/auditor';

/** The auditor's verdict on the drill's log, in the numbers the drill report shows. */
export interface DrillAuditSummary {
  clean: boolean;
  lastSeq: number;
  transactions: number;
  /** Invariant violations of every rule, and those that are overcommit (a resource or a GPU device). */
  invariantViolations: number;
  overcommit: number;
  /** Events that differ from their re-derivation by the core. */
  divergences: number;
  firstDivergence: string | null;
  checkpoints: { checked: number; failed: number };
  chainOk: boolean;
  decisionsStream: { checked: number; missing: number; mismatched: number; inFlight: number; unexpected: number; duplicated: number };
  stateHash: string;
  failureCount: number;
  /** The first failures, one line each. */
  failures: string[];
}

/** Reduces an `AuditReport` to the drill's summary. */
export function summarizeAudit(report: AuditReport): DrillAuditSummary {
  const d = report.divergence;
  const s = report.decisionsStream;
  return {
    clean: report.clean,
    lastSeq: report.lastSeq,
    transactions: report.transactions,
    invariantViolations: report.invariants.count,
    overcommit: report.invariants.violations.filter((v) => v.rule === 'overcommit' || v.rule === 'gpu-device').length,
    divergences: report.divergences,
    firstDivergence: d === null ? null : `log ${d.seq} event ${d.index} (${d.kind}): ${d.message}`,
    checkpoints: report.checkpoints,
    chainOk: report.chain.ok,
    decisionsStream: { checked: s.checked, missing: s.missing, mismatched: s.mismatched, inFlight: s.inFlight, unexpected: s.unexpected, duplicated: s.duplicated },
    stateHash: report.stateHash,
    failureCount: report.failureCount,
    failures: report.failures.slice(0, 5).map((f) => `log ${f.seq} ${f.check}: ${f.message}`),
  };
}
