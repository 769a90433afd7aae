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

/**
 * Writes into `cache` the leaves of `state` that `events` touched (their jobs' and nodes' shards),
 * so that the next hash of a state (a checkpoint, a snapshot) writes little: a writer that calls
 * this after every transaction spreads a checkpoint's serialising over the transactions before it.
 */
export function warmStateCache(state: State, cache: CanonicalCache, events: readonly SchedulerEvent[]): void {
  const jobs = new Set<number>();
  const nodes = new Set<number>();
  for (const event of events) {
    if ('jobId' in event && typeof event.jobId === 'string') jobs.add(shardOf(event.jobId));
    if ('node' in event && typeof event.node === 'string') nodes.add(shardOf(event.node));
    if ('nodeId' in event) nodes.add(shardOf(event.nodeId));
    if (event.type === 'JobSubmitted') jobs.add(shardOf(event.job.id));
    if (event.type === 'NodeRegistered') nodes.add(shardOf(event.node.id));
    if (event.type === 'GangCommitted') for (const a of event.allocations) nodes.add(shardOf(a.node));
    if (event.type === 'JobsRetired') for (const id of event.jobIds) jobs.add(shardOf(id));
  }
  for (const shard of jobs) {
    warm(state.jobs, shard, cache);
    warm(state.pending, shard, cache);
    if (state.retired !== undefined) warm(state.retired, shard, cache);
  }
  for (const shard of nodes) warm(state.nodes, shard, cache);
}

function warm<T extends ShardEntry>(table: Sharded<T>, shard: number, cache: CanonicalCache): void {
  const leaf = shardLeaf(table, shard);
  if (leaf !== null && leaf !== undefined) cacheLeaf(cache, leaf);
}
