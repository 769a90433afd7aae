// @muster/scheduler: one scheduler replica (leader or standby) on NATS JetStream.
export { startScheduler } from './startScheduler.ts';
export type { SchedulerHandle } from './startScheduler.ts';
export type { SchedulerOptions } from './config.ts';
export type { Role } from './replica.ts';
export { API_SUBJECTS } from './apiServer.ts';
export type { ApiError, ApiReply } from './apiServer.ts';
export { Replica } from './replica.ts';
export { Ledger } from './ledger.ts';
export type { CheckpointMismatch } from './ledger.ts';
export type { RebuildReport } from './replica.ts';
export type { ReplicaDeps } from './replicaDeps.ts';
export { HeartbeatMonitor, LOST_ANSWER } from './heartbeatMonitor.ts';
export { resolveOptions } from './config.ts';
