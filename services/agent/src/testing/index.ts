// @muster/agent/testing: an agent's parts the cross-package tests drive directly.

export { DeliveryCensus } from '../deliveryCensus.ts';
export { MemberLedger } from '../memberLedger.ts';
export { startNodeAgent } from '../nodeAgent.ts';
export type { NodeAgent } from '../nodeAgent.ts';
export { hostAddress } from '../hostAddress.ts';
export { hostfileText } from '../gangFiles.ts';
export { gangNodes, memberEnvironment } from '../memberEnvironment.ts';
export { createOutputPublisher } from '../outputPublisher.ts';
export { LineSplitter } from '../lineSplitter.ts';
