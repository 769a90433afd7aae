// @muster/stack: real processes on loopback (nats-server, scheduler replicas, agents) and their bounded-time stop.
export { createStack } from './stack.ts';
export type { Stack, StackOptions, StackStopReport } from './stack.ts';
export { startNatsServer } from './natsServer.ts';
export type { NatsServerHandle, NatsServerOptions } from './natsServer.ts';
export { startNatsCluster } from './natsCluster.ts';
export type { NatsClusterHandle, NatsClusterOptions } from './natsCluster.ts';
export { INSTALL_NATS_SERVER, NatsServerMissingError, natsServerBinary } from './natsServerBinary.ts';
export { freePort } from './freePort.ts';
export { spawnManaged, within } from './managedProcess.ts';
export type { ManagedProcess, ManagedProcessOptions, ProcessExit } from './managedProcess.ts';
export { spawnScheduler } from './schedulerProcess.ts';
export type { SchedulerProcess, SchedulerProcessOptions } from './schedulerProcess.ts';
export { spawnAgent } from './agentProcess.ts';
export type { AgentProcess, AgentProcessOptions } from './agentProcess.ts';
export { REPO_ROOT, cliEntry, schedulerEntry } from './repoPaths.ts';
