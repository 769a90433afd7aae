// @muster/agent: the node agent (real or simulated hosts): register, heartbeat, run bound members, report.
export { startAgent } from './startAgent.ts';
export type { Agent, AgentOptions } from './startAgent.ts';
export { simulatedNodes } from './simulatedNodes.ts';
export { AgentError, isAgentError } from './agentError.ts';
export type { AgentErrorCode } from './agentError.ts';
