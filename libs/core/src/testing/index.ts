// @muster/core/testing: what tests in other packages may use of the core: the given/when/then
// harness, fixtures, invariant checks, and the session index a property test drives directly.

export { alternativesJob, job, node, slotNode } from './fixtures.ts';
export type { JobOptions, NodeOptions, RoleOptions } from './fixtures.ts';
export { Cluster, advance, cancel, cancelPicked, close, complete, done, drain, finishPicked, given, lose, placement, policy, queue, register, retire, schedule, scheduleDueBy, submit } from './given.ts';
export type { Outcome, Step } from './given.ts';
export { invariantViolations, releaseViolations } from './invariants.ts';
export { HostIndexCache, freshIndexFromState, readLabels, releaseSessionIndex, sessionIndex } from '../placement/sessionIndex.ts';
