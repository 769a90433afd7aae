// @muster/scheduler/testing: a replica's parts the cross-package tests drive directly.

export { ApiServer } from '../apiServer.ts';
export { AppendPipeline } from '../appendPipeline.ts';
export { InputReader } from '../inputReader.ts';
export { LeaseThread } from '../leaseThread.ts';
export { StreamWatch } from '../streamWatch.ts';
