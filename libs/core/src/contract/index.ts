export type {
  AlternativesJobSpec, FailurePolicy, FailureRule, GpuDevice, Identity, JobRequest, JobSpec, MemberResources, NodeCapacity, NodeSpec, PlacementPolicy, PlacementSpec, Policy, PolicySpec,
  PlainJobSpec, PortRange, QueueResources, QueueSpec, RoleSpec, SpecIssue, Validated,
} from './types.ts';
export {
  ADDRESS_PATTERN, DEFAULT_RENDEZVOUS_PORTS, ENV_NAME_PATTERN, ID_PATTERN, MAX_ALTERNATIVES, MAX_BACKOFF_MS, MAX_FAILURE_RULES, MAX_RESTARTS, MAX_RULE_EXIT_CODES, MAX_GANG_SIZE, MAX_GPUS_PER_NODE, MAX_LABEL_VALUE_LENGTH, MAX_NAME_LENGTH, MAX_PRIORITY,
  MAX_SELECT_LENGTH, MIN_ALTERNATIVES, NODE_LABEL_PATTERN,
} from './specLimits.ts';
export { validateJobSpec } from './validateJobSpec.ts';
export { validateNodeSpec } from './validateNodeSpec.ts';
export { validatePolicySpec } from './validatePolicySpec.ts';
export { validateQueueSpec } from './validateQueueSpec.ts';
export { MAX_QUEUE_DEPTH, MAX_QUEUES, QUEUE_NAME_PATTERN, queueSpecSchema } from './queueSpecSchema.ts';
export { DEFAULT_POLICY } from './defaultPolicy.ts';
export { MAX_RESERVE_DEPTH, policySpecSchema } from './policySpecSchema.ts';
export { parseJobSpecJson, parseNodeSpecJson } from './parseSpecJson.ts';
export { alternativeFingerprints, jobFingerprint, unsatisfiableKey } from './jobFingerprint.ts';
export type { JobSpecWire } from './jobSpecSchema.ts';
export { jobSpecSchema } from './jobSpecSchema.ts';
export type { NodeSpecWire } from './nodeSpecSchema.ts';
export { nodeSpecSchema } from './nodeSpecSchema.ts';
export type { JsonSchema } from './specJsonSchemas.ts';
export { jobSpecJsonSchema, nodeSpecJsonSchema, policySpecJsonSchema, queueSpecJsonSchema, specSchemaFiles } from './specJsonSchemas.ts';
