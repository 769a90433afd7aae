import type { AuditReport } from '@muster/auditor';

/** An audit's report without what depends on timing (how long it took, and where): what two ways of auditing one log must agree on. */
export function comparable(report: AuditReport): Omit<AuditReport, 'ms' | 'timings'> {
  const { ms: _ms, timings: _timings, ...rest } = report;
  return rest;
}
