export { DEFAULT_QUEUE, effectiveQueue, isLeafQueue, jobInQueue, queuePath, queueRuntimeLimits, queueSetIssue } from './queueTree.ts';
export type { QueueTable } from './queueTree.ts';
export { QUEUE_RESOURCES, borrowed, queueViews, subtreeUsage } from './queueUsage.ts';
export type { QueueResource } from './queueUsage.ts';
