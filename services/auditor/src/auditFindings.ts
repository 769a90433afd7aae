import type { CheckName } from './auditReport.ts';
import { FailureLog } from './failureLog.ts';

/** What one auditor's checks found: the failures, the counts its report gives, and the time spent re-deriving and hashing. */
export class AuditFindings {
  readonly failures = new FailureLog();
  readonly counts = {
    transactions: 0,
    events: 0,
    sessions: 0,
    sessionsCutShort: 0,
    decisionsRederived: 0,
    eventsRederived: 0,
    divergences: 0,
    checkpointsChecked: 0,
    checkpointsFailed: 0,
    snapshotsChecked: 0,
    snapshotsFailed: 0,
    inputsRederived: 0,
    inputsStructural: 0,
    inputsLost: 0,
  };
  /** Milliseconds spent re-deriving sessions (`decide`), inputs (`ingest`) and hashing states. */
  readonly timings = { decideMs: 0, ingestMs: 0, hashMs: 0 };

  /** Records a failure of `check` at log sequence `seq`. */
  fail(seq: number, check: CheckName, message: string): void {
    this.failures.add({ seq, check, message });
  }
}

/** The counts an audit reports, as `AuditFindings` keeps them. */
export type AuditCounts = AuditFindings['counts'];
