import { shardEntriesSorted, shardLeaves } from '../shard.ts';
import type { NodeState, State } from '../state.ts';
import type { OfflineHosts } from './hostCounter.ts';
import type { HostSource } from './hostIndex.ts';
import { HostIndex } from './hostIndex.ts';

/** A host index for a session, and how many nodes are lost or drained (they take no members). */
export interface SessionIndex {
  index: HostIndex;
  offline: OfflineHosts;
}

/** A session index with what it needs to be brought up to a later state. */
export interface CachedIndex extends SessionIndex {
  /** Host index by node id. */
  hosts: Map<string, number>;
  /** Node ids of the lost and drained nodes, with the status each had. */
  offlineIds: Map<string, NodeState['status']>;
  /** The session using the index: its hosts must be refreshed before the next one. */
  busy: boolean;
}

/**
 * The last session's index, kept by the caller (a turn context) for the next one: node records
 * that are the very same objects as when the index last read them are unchanged (states are
 * immutable and share what did not change), so only changed nodes are re-read, and the index is
 * rebuilt only when the set of up nodes or a node's spec changed. Without it every session would
 * sort and index the whole cluster.
 */
export class HostIndexCache {
  /** The index of the last session, or null before the first. */
  cached: CachedIndex | null = null;
}

function source(node: NodeState): HostSource {
  return { spec: node.spec, usedCpu: node.used.cpu, usedMemoryMb: node.used.memoryMb, usedSlots: node.used.slots, gpusUsed: node.gpusUsed };
}

/** A fresh host index of a state's up nodes (in node id order), with the lost and drained counts. */
export function freshIndexFromState(state: State): SessionIndex {
  const sources: HostSource[] = [];
  const offline: OfflineHosts = { lost: 0, drained: 0 };
  for (const [, node] of shardEntriesSorted(state.nodes)) {
    if (node.status === 'lost') offline.lost++;
    else if (node.status === 'drained') offline.drained++;
    else sources.push(source(node));
  }
  return { index: new HostIndex(sources), offline };
}

/**
 * The host index for a session on `state`: the previous session's index brought up to date when
 * the cluster's shape is the same (same up nodes, same specs), else a fresh one, kept in `cache`.
 * Call `releaseSessionIndex` when the session ends. Equal to `freshIndexFromState(state)` either way.
 */
export function sessionIndex(state: State, cache: HostIndexCache): SessionIndex {
  const c = cache.cached;
  cache.cached = null;
  if (c !== null && !c.busy && refreshed(c, state)) {
    c.index.resetSession();
    c.busy = true;
    cache.cached = c;
    return c;
  }
  const fresh = freshIndexFromState(state);
  const hosts = new Map<string, number>();
  fresh.index.ids.forEach((id, h) => hosts.set(id, h));
  const offlineIds = new Map<string, NodeState['status']>();
  for (const [, leaf] of shardLeaves(state.nodes)) for (const node of leaf) if (node.status !== 'up') offlineIds.set(node.spec.id, node.status);
  const made: CachedIndex = { ...fresh, hosts, offlineIds, busy: true };
  cache.cached = made;
  return made;
}

/**
 * Ends a session's use of its index: the hosts it debited are marked for re-reading (the next
 * state's records of them are new objects anyway), so a later session starts from its own state.
 */
export function releaseSessionIndex(s: SessionIndex, cache: HostIndexCache): void {
  const cached = cache.cached;
  if (cached === null || cached.index !== s.index) return;
  for (const c of s.index.classes) for (const h of c.touched) s.index.sources[h] = null;
  cached.busy = false;
}

// Brings the cached index up to `state`, or says it cannot (the cluster's shape changed).
function refreshed(c: CachedIndex, state: State): boolean {
  const index = c.index;
  let seen = 0;
  let offline = 0;
  const changed: [number, NodeState][] = [];
  for (const [, leaf] of shardLeaves(state.nodes)) {
    for (const node of leaf) {
      if (node.status !== 'up') {
        if (c.offlineIds.get(node.spec.id) !== node.status) return false;
        offline++;
        continue;
      }
      const h = c.hosts.get(node.spec.id);
      if (h === undefined || index.specs[h] !== node.spec) return false;
      seen++;
      const was = index.sources[h];
      if (was === null || was === undefined || was.gpusUsed !== node.gpusUsed || was.usedCpu !== node.used.cpu
        || was.usedMemoryMb !== node.used.memoryMb || was.usedSlots !== node.used.slots) changed.push([h, node]);
    }
  }
  if (seen !== index.ids.length || offline !== c.offlineIds.size) return false;
  for (const [h, node] of changed) {
    const s = source(node);
    index.refresh(h, s);
    index.sources[h] = s;
  }
  return true;
}
