// @muster/auditor: replays the log with the same core and proves every decision follows from what
// came before it (DESIGN.md §3, §7); time travel to the state as of any sequence.
export { auditLog } from './auditLog.ts';
export { PARALLEL_LOG_BYTES } from './parallelAudit.ts';
export type {
  AuditOptions,
  AuditProgress,
  AuditReport,
  CheckName,
  DecisionsStreamReport,
  Divergence,
  Failure,
  InvariantRule,
  Violation,
} from './auditReport.ts';
export { isOfflineHistory } from './auditSource.ts';
export type { AuditSource, HistorySnapshot, OfflineHistory } from './auditSource.ts';
export { AuditorError, isAuditorError } from './auditorError.ts';
export type { AuditorErrorCode } from './auditorError.ts';
export { historyLines, inputLines, inputsPathOf, readHistoryFile } from './historyFile.ts';
export { isAbout, jobStory, stateAt } from './timeTravel.ts';
export type { JobStory, StateAt, StoryEvent } from './timeTravel.ts';
export { runDrill } from './drill.ts';
export type { DrillHooks } from './drill.ts';
export { FAULT_KINDS, drillDefaults, resolveDrillOptions } from './drillOptions.ts';
export type { DrillOptions, DrillSchedule, FaultKind } from './drillOptions.ts';
export { drillFailures, drillTable } from './drillReport.ts';
export type { DrillReport, Finding } from './drillReport.ts';
export type { DrillAuditSummary } from './drillAudit.ts';
export type { ReplicaStatus } from './drillCluster.ts';
export type { FaultRecord } from './drillFaults.ts';
export type { LivenessResult, LivenessViolation } from './drillLiveness.ts';
export type { Spread, Takeover } from './drillTakeover.ts';
export { runSoak } from './soak.ts';
export type { SoakOptions, SoakReport } from './soak.ts';
