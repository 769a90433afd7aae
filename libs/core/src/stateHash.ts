import { cacheLeaf, canonicalHash } from './canonical.ts';
import type { CanonicalCache } from './canonical.ts';
import type { SchedulerEvent } from './events.ts';
import { shardLeaf, shardOf } from './shard.ts';
import type { ShardEntry, Sharded } from './shard.ts';
import type { State } from './state.ts';

/** The hash of a state: SHA-256 (hex) of its canonical JSON; what checkpoints and snapshots carry. */
export function stateHash(state: State): string {
  return canonicalHash(state);
}

/** The shards of the jobs and nodes that some events touched: what `warmShards` writes. */
export interface TouchedShards {
  readonly jobs: Set<number>;
  readonly nodes: Set<number>;
}

/** Adds the shards `events` touched to `into` (a new set when absent) and returns it. */
export function touchedShards(events: readonly SchedulerEvent[], into: TouchedShards = { jobs: new Set(), nodes: new Set() }): TouchedShards {
  const { jobs, nodes } = into;
  for (const event of events) {
    if ('jobId' in event && typeof event.jobId === 'string') jobs.add(shardOf(event.jobId));
    if ('node' in event && typeof event.node === 'string') nodes.add(shardOf(event.node));
    if ('nodeId' in event) nodes.add(shardOf(event.nodeId));
    if (event.type === 'JobSubmitted') jobs.add(shardOf(event.job.id));
    if (event.type === 'NodeRegistered') nodes.add(shardOf(event.node.id));
    if (event.type === 'GangCommitted') for (const a of event.allocations) nodes.add(shardOf(a.node));
    if (event.type === 'JobsRetired') for (const id of event.jobIds) jobs.add(shardOf(id));
  }
  return into;
}

/**
 * Writes into `cache` the leaves of `state` in the touched shards, so that the next hash of a
 * state (a checkpoint, a snapshot) writes little. A writer that calls this between transactions
 * spreads a checkpoint's serialising over them; one that collects the shards of several
 * transactions first writes each changed leaf once.
 */
export function warmShards(state: State, cache: CanonicalCache, touched: TouchedShards): void {
  for (const shard of touched.jobs) {
    warm(state.jobs, shard, cache);
    warm(state.pending, shard, cache);
    if (state.retired !== undefined) warm(state.retired, shard, cache);
  }
  for (const shard of touched.nodes) warm(state.nodes, shard, cache);
}

/** `warmShards` for the shards that `events` touched. */
export function warmStateCache(state: State, cache: CanonicalCache, events: readonly SchedulerEvent[]): void {
  warmShards(state, cache, touchedShards(events));
}

function warm<T extends ShardEntry>(table: Sharded<T>, shard: number, cache: CanonicalCache): void {
  const leaf = shardLeaf(table, shard);
  if (leaf !== null && leaf !== undefined) cacheLeaf(cache, leaf);
}
