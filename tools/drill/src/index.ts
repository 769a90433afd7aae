// @muster/drill: the HA drill and soak (DESIGN.md §7): a real three-node NATS cluster, scheduler
// replica processes, simulated agents, a workload, faults, then the checks and the auditor's verdict.
export { runDrill } from './drill.ts';
export type { DrillHooks } from './drill.ts';
export { drillDefaults, resolveDrillOptions } from './drillOptions.ts';
export type { DrillOptions, DrillSchedule } from './drillOptions.ts';
export { ALL_FAULT_KINDS, FAULT_KINDS, faultsHelp } from './faults/index.ts';
export type { FaultKind } from './faults/index.ts';
export { drillFailures, drillNotes, drillTable, drillVerdict, isSaturated } from './drillReport.ts';
export type { DrillReport, DrillVerdict, Finding } from './drillReport.ts';
export type { DrillAuditSummary } from './drillAudit.ts';
export type { ReplicaStatus } from './drillCluster.ts';
export type { FaultRecord } from './drillFaultRecord.ts';
export type { LivenessResult, LivenessViolation } from './drillLiveness.ts';
export type { Spread, Takeover } from './drillTakeover.ts';
export { runSoak } from './soak.ts';
export type { SoakOptions, SoakReport } from './soak.ts';
export { drillLoad, nodesForRate } from './drillCapacity.ts';
export type { DrillLoad } from './drillCapacity.ts';
export { DRILL_MIX } from './drillJobs.ts';
export { checkDecisions, lostJobs } from './drillDecisions.ts';
export type { Backlog, DecisionFindings, LiveRead } from './drillDecisions.ts';
export type { ClockResult } from './drillClock.ts';
export { numbersByKind } from './drillByKind.ts';
export type { DrillFindings, KindNumbers } from './drillByKind.ts';
export { libfaketime } from './drillCluster.ts';
export { diskFaultUnavailable } from './drillDiskFault.ts';
export { partitionUnavailable, slowNetworkUnavailable } from './drillNetworkChecks.ts';
