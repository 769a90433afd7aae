// @muster/core: the pure scheduler. Events, state, evolve/fold, ingest, sessions, placement.
export type { Transaction, TransactionKind, LoggedTransaction } from './envelope.ts';
export { transactionHash } from './envelope.ts';
export { canonicalJson, canonicalHash, sha256Hex } from './canonical.ts';
export type * from './events.ts';
export { isDecision } from './events.ts';
export type { Resources } from './resources.ts';
export { zeroResources, addResources, scaleResources, isZeroResources } from './resources.ts';
export { SHARD_COUNT, shardOf, shardGet, shardEntriesSorted, shardSize } from './shard.ts';
export type { Sharded } from './shard.ts';
export type { State, NodeState, JobState, JobStatus, NodeStatus, MemberState, ProvisionalDebit, Usage } from './state.ts';
export { STATE_SCHEMA, initialState } from './state.ts';
export { apply, applyTransaction, evolve, fold, foldTransactions } from './evolve.ts';
export { stateHash } from './stateHash.ts';
export * from './spec/index.ts';
export * from './select/index.ts';
