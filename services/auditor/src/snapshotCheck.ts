import type { AuditFindings } from './auditFindings.ts';
import { shortHash } from './shortHash.ts';

/** A stored snapshot to compare with the replay at its sequence; `problem` when its own bytes do not check out. */
export interface SnapshotCheck {
  name: string;
  seq: number;
  hash: string;
  problem: string | null;
}

/** Checks the snapshots stored at log sequence `seq` against `hash`, the replayed state's there. */
export function checkSnapshots(seq: number, records: readonly SnapshotCheck[], hash: string, findings: AuditFindings): void {
  for (const r of records) {
    findings.counts.snapshotsChecked++;
    const problem = r.problem ?? (r.hash === hash ? null : `snapshot ${r.name} at ${seq} records hash ${shortHash(r.hash)}; the replayed state at ${seq} hashes to ${shortHash(hash)}`);
    if (problem !== null) {
      findings.counts.snapshotsFailed++;
      findings.fail(seq, 'snapshot', problem);
    }
  }
}
