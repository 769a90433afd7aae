import { SHARD_FANOUT, SHARD_LEAF_DEPTH, leafGet, shardEntriesSorted, shardGet, shardLeaf, shardLeaves } from '../shard.ts';
import type { NodeState, State } from '../state.ts';
import type { OfflineHosts } from './hostCounter.ts';
import type { HostSource } from './hostClass.ts';
import { HostIndex } from './hostIndex.ts';
import { SpecMemo } from './specMemo.ts';

/** A host index for a session, and how many nodes are lost or drained (they take no members). */
export interface SessionIndex {
  index: HostIndex;
  offline: OfflineHosts;
}

/** A session index with what it needs to be brought up to a later state. */
export interface CachedIndex extends SessionIndex {
  /** Node ids of the lost and drained nodes, with the status each had. */
  offlineIds: Map<string, NodeState['status']>;
  /** The session using the index: its hosts must be refreshed before the next one. */
  busy: boolean;
  /**
   * Frozen parts of the nodes trie (the table, its levels, its leaves) whose every node the index
   * holds as it is, with their up and offline counts: the same object in a later state is skipped
   * without reading it (states share what did not change).
   */
  known: WeakMap<object, Counts>;
  /** Hosts the last session debited (their `sources` null): re-read by the next one, whatever part of the trie they are in. */
  stale: number[];
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
  /**
   * Group hosts into classes by every label, not only those read (the grouping before v1.1): no
   * decision may differ, and the property tests that prove it set this.
   */
  everyLabel = false;
  /**
   * The labels the jobs under a frozen part (a level or a leaf) of the pending (or elastic) table
   * read: the same part holds the same ids, whose specs do not change, so a later session reads
   * only the parts that changed (issue 32: a session's cost follows what changed).
   */
  readonly labelsByPart = new WeakMap<object, readonly string[]>();
  /** What the sessions derive from the state's specs, kept for every later session (and every index made for them). */
  readonly memo = new SpecMemo();
}

function source(node: NodeState): HostSource {
  return { spec: node.spec, usedCpu: node.used.cpu, usedMemoryMb: node.used.memoryMb, usedSlots: node.used.slots, gpusUsed: node.gpusUsed };
}

/**
 * A fresh host index of a state's up nodes (in node id order), with the lost and drained counts;
 * with `labels`, its classes group hosts by those labels only (see HostIndex).
 */
export function freshIndexFromState(state: State, labels: ReadonlySet<string> | null = null, memo: SpecMemo = new SpecMemo()): SessionIndex {
  const sources: HostSource[] = [];
  const offline: OfflineHosts = { lost: 0, drained: 0 };
  for (const [, node] of shardEntriesSorted(state.nodes)) {
    if (node.status === 'lost') offline.lost++;
    else if (node.status === 'drained') offline.drained++;
    else sources.push(source(node));
  }
  return { index: new HostIndex(sources, labels, memo), offline };
}

/**
 * The labels a session can read (select names and topology keys of the pending jobs, every
 * variant, and of the running elastic gangs it may grow), sorted: hosts that differ only in
 * other labels are alike to every search it makes, so they share a class (a rack or hostname
 * label would otherwise make a class of every rack or host). With `byPart`, the labels of each
 * frozen part of those tables (a level or a leaf) are remembered: the same part holds the same
 * ids, whose specs do not change, so a later session reads only the parts that changed.
 */
export function readLabels(state: State, byPart: WeakMap<object, readonly string[]> | null = null, memo: SpecMemo = new SpecMemo()): string[] {
  const names = new Set<string>();
  for (const table of state.elastic === undefined ? [state.pending] : [state.pending, state.elastic]) {
    for (const name of partLabels(state.jobs, table, 0, 0, byPart, memo)) names.add(name);
  }
  return [...names].sort();
}

// the labels of the jobs under one part of an id table (depth SHARD_LEAF_DEPTH: a leaf, whose
// shard number is `shard`), remembered in `byPart` when the part is frozen
function partLabels(jobs: State['jobs'], part: readonly unknown[], depth: number, shard: number, byPart: WeakMap<object, readonly string[]> | null, memo: SpecMemo): readonly string[] {
  const known = byPart?.get(part);
  if (known !== undefined) return known;
  const names = new Set<string>();
  if (depth === SHARD_LEAF_DEPTH) {
    const leaf = shardLeaf(jobs, shard);
    for (const id of part as readonly string[]) {
      const job = leafGet(leaf, id);
      if (job !== undefined) for (const name of memo.labelsRead(job)) names.add(name);
    }
  } else {
    for (let i = 0; i < part.length; i++) {
      const child = part[i];
      if (child === null || child === undefined) continue;
      for (const name of partLabels(jobs, child as unknown[], depth + 1, shard * SHARD_FANOUT + i, byPart, memo)) names.add(name);
    }
  }
  const labels = [...names];
  if (byPart !== null && Object.isFrozen(part)) byPart.set(part, labels);
  return labels;
}

/**
 * The host index for a session on `state`: the previous session's index brought up to date when
 * the cluster's shape is the same (same up nodes, same specs) and it groups hosts by every label
 * read now (`readLabels`, by leaf as `cache` remembers them unless `indices` is off), else a fresh one grouped by exactly those, kept in `cache`; its
 * `prune` is `indices`. Call
 * `releaseSessionIndex` when the session ends. Equal to `freshIndexFromState(state, its labels)`.
 */
export function sessionIndex(state: State, cache: HostIndexCache, indices = true): SessionIndex {
  const c = cache.cached;
  cache.cached = null;
  const labels = cache.everyLabel ? null : readLabels(state, indices ? cache.labelsByPart : null, cache.memo);
  // an index grouped by more labels than are read now still serves (classes split further than
  // needed change no decision): only a label read that it does not group by rebuilds it
  const had = c?.index.labels;
  const same = labels === null ? had === null : had !== null && had !== undefined && labels.every((l) => had.has(l));
  if (c !== null && same && !c.busy && refreshed(c, state)) {
    c.index.resetSession();
    c.index.prune = indices;
    c.busy = true;
    cache.cached = c;
    return c;
  }
  const fresh = freshIndexFromState(state, labels === null ? null : new Set(labels), cache.memo);
  fresh.index.prune = indices;
  const offlineIds = new Map<string, NodeState['status']>();
  for (const [, leaf] of shardLeaves(state.nodes)) for (const node of leaf) if (node.status !== 'up') offlineIds.set(node.spec.id, node.status);
  const made: CachedIndex = { ...fresh, offlineIds, busy: true, known: new WeakMap(), stale: [] };
  // reading the trie once more records its parts
  const read: [object, Counts][] = [];
  if (walk(made, state.nodes, 0, read, null) !== null) for (const [part, counts] of read) made.known.set(part, counts);
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
  for (const h of s.index.touched) {
    s.index.sources[h] = null;
    cached.stale.push(h);
  }
  cached.busy = false;
}

/** Up and offline nodes under a part of the nodes trie. */
interface Counts {
  up: number;
  offline: number;
}

// Brings the cached index up to `state`, or says it cannot (the cluster's shape changed).
function refreshed(c: CachedIndex, state: State): boolean {
  const index = c.index;
  const changed: [number, NodeState][] = [];
  const read: [object, Counts][] = [];
  const counts = walk(c, state.nodes, 0, read, changed);
  if (counts === null || counts.up !== index.ids.length || counts.offline !== c.offlineIds.size) return false;
  for (const [h, node] of changed) refreshHost(index, h, node);
  // hosts the last session debited in parts the walk skipped (the same records) are read by id
  for (const h of c.stale) {
    if (index.sources[h] !== null) continue;
    const node = shardGet(state.nodes, index.ids[h]!);
    if (node === undefined || node.status !== 'up' || node.spec !== index.specs[h]) return false;
    refreshHost(index, h, node);
  }
  c.stale = [];
  for (const [part, known] of read) c.known.set(part, known);
  return true;
}

function refreshHost(index: HostIndex, h: number, node: NodeState): void {
  const s = source(node);
  index.refresh(h, s);
  index.sources[h] = s;
}

/**
 * Counts the nodes under a part of the nodes trie (depth 0: the table; 3: a leaf), skipping parts
 * the index holds as they are; collects up nodes whose use differs from the index's (`changed`,
 * when given) and the frozen parts read (`read`). Null when a node is not the
 * index's (a node joined, left, changed status or spec): the index must be rebuilt.
 */
function walk(c: CachedIndex, part: readonly unknown[], depth: number, read: [object, Counts][], changed: [number, NodeState][] | null): Counts | null {
  const known = c.known.get(part);
  if (known !== undefined) return known;
  const counts: Counts = { up: 0, offline: 0 };
  // (index loops: this runs for every part read, and a for-of allocates where it is not optimised)
  if (depth === SHARD_LEAF_DEPTH) {
    const nodes = part as NodeState[];
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (node.status !== 'up') {
        if (c.offlineIds.get(node.spec.id) !== node.status) return null;
        counts.offline++;
        continue;
      }
      const h = c.index.hostOf.get(node.spec.id);
      if (h === undefined || c.index.specs[h] !== node.spec) return null;
      counts.up++;
      const was = c.index.sources[h];
      if (changed !== null && (was === null || was === undefined || was.gpusUsed !== node.gpusUsed || was.usedCpu !== node.used.cpu
        || was.usedMemoryMb !== node.used.memoryMb || was.usedSlots !== node.used.slots)) changed.push([h, node]);
    }
  } else {
    for (let i = 0; i < part.length; i++) {
      const child = part[i];
      if (child === null || child === undefined) continue;
      const sub = walk(c, child as unknown[], depth + 1, read, changed);
      if (sub === null) return null;
      counts.up += sub.up;
      counts.offline += sub.offline;
    }
  }
  if (Object.isFrozen(part)) read.push([part, counts]);
  return counts;
}
