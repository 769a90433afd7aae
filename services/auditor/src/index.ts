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
