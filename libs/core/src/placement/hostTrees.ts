import type { MemberResources } from '../contract/types.ts';
import { leastDominating } from './failureMemo.ts';
import type { MemoMode } from './failureMemo.ts';
import type { HostClass } from './hostClass.ts';

// Per host class, a max-tree over its hosts (in id order, leaves from `leafBase`): each node keeps
// the best free values below it, so a search opens only subtrees that could hold a bucket.

/** What the trees read of the hosts: their free values and binpack keys, and whether changes are deferred. */
export interface TreeHosts {
  readonly freeCpu: Float64Array;
  readonly freeMem: Float64Array;
  readonly freeSlots: Float64Array;
  readonly freeGpu: Int32Array;
  readonly key: Float64Array;
  /** Leaves set while the trees' inner nodes wait (null: trees are kept up to date at every change). */
  readonly deferred: DeferredLeaves | null;
  /** Largest number of free devices in one NVLink domain of a host. */
  maxDomainFree(h: number): number;
}

/**
 * Memory-per-CPU ratios (MiB per millicore, powers of two so divisions are exact) at which each
 * tree node keeps max min(free cpu, free memory / ρ). A host that fits (cpu c, memory m) has
 * min(free cpu, free memory / ρ) ≥ min(c, m / ρ) for every ρ, so a subtree below that bound holds
 * no host for the bucket even when one host has the CPU and another the memory: the pruning the
 * per-dimension maxima alone cannot do on a binpacked cluster.
 */
export const RATIOS: readonly number[] = [0.25, 1, 4, 16];

/**
 * Shares of a class's CPU (and memory) capacity at which each tree node keeps the least key among
 * hosts with at least that share free. A bucket needing at least such a share can only go to those
 * hosts, so that key is a tighter lower bound of the subtree's score than its least key overall
 * (which, on a binpacked cluster, is a nearly full host that cannot take the bucket).
 */
export const LEVELS: readonly number[] = [1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2];

/**
 * Shares at which each tree node of a class with a slot limit keeps the least key among hosts with
 * at least that share of both their CPU and their slots free (`jointShare`). On hosts that take many
 * small members, one host may have the CPU and another the slots, and either has a low key: a
 * bucket that needs both can only go to hosts with the joint share, so their least key bounds the
 * subtree's score where the per-dimension levels do not. Finer than LEVELS: one member is a small
 * share of such a host.
 */
export const JOINT_LEVELS: readonly number[] = [1 / 256, 1 / 128, 1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2];

/** The lesser of the shares of a class's CPU and slot capacity that `cpu` and `slots` are (for a class with joint levels: both capacities positive). */
export function jointShare(c: HostClass, cpu: number, slots: number): number {
  const cap = c.spec.capacity;
  return Math.min(cpu / cap.cpu, slots / cap.slots!);
}

/** The highest level index whose share of `capacity` is at most `need` (-1: none). */
export function levelOf(need: number, capacity: number, levels: readonly number[] = LEVELS): number {
  let level = -1;
  for (let i = 0; i < levels.length; i++) if (levels[i]! * capacity <= need) level = i;
  return level;
}

/**
 * The most members of one role (per-member demand `r`) a host of the class could take now, by
 * its tree's root maxima per dimension and per ratio of memory to CPU: an upper bound (no host
 * takes more; a host search for a bucket of more finds none), 0 when none takes one; bounded
 * too by the memo of failures unless `memo` is off. Once the bound is at most `beat` it is
 * returned as it is then (still a bound, and at most `beat`): a caller after the largest over
 * several classes, `beat` the largest so far, reads no more of a class that cannot raise it.
 */
export function mostMembers(c: HostClass, r: MemberResources, locality: boolean, memo: MemoMode, beat = 0): number {
  let n = c.maxSlots[1]!;
  if (r.cpu > 0) n = Math.min(n, Math.floor(c.maxCpu[1]! / r.cpu));
  if (r.memoryMb > 0) n = Math.min(n, Math.floor(c.maxMem[1]! / r.memoryMb));
  if (r.gpus > 0) n = Math.min(n, Math.floor((locality ? c.maxDom[1]! : c.maxGpu[1]!) / r.gpus));
  for (let k = 0; k < RATIOS.length && n > beat; k++) {
    const per = Math.min(r.cpu, r.memoryMb / RATIOS[k]!);
    if (per > 0) n = Math.min(n, Math.floor(c.ratioMax[k]![1]! / per));
  }
  // a bucket that dominates a demand no host of the class took this session fails too
  if (memo !== 'off') for (let i = 0; i < c.negatives.length && n > beat; i++) n = Math.min(n, leastDominating(c.negatives[i]!, r, locality) - 1);
  return n;
}

/** Sizes a class's tree to its hosts and fills it from the hosts' free values. */
export function buildTree(index: TreeHosts, c: HostClass): void {
  let base = 1;
  while (base < c.hosts.length) base *= 2;
  c.leafBase = base;
  const size = 2 * base;
  c.maxCpu = new Float64Array(size).fill(-1);
  c.maxMem = new Float64Array(size).fill(-1);
  c.maxSlots = new Float64Array(size).fill(-1);
  c.maxGpu = new Float64Array(size).fill(-1);
  c.maxDom = new Float64Array(size).fill(-1);
  c.minKey = new Float64Array(size).fill(Number.POSITIVE_INFINITY);
  c.firstRank = new Float64Array(size).fill(Number.POSITIVE_INFINITY);
  c.ratioMax = RATIOS.map(() => new Float64Array(size).fill(-1));
  const joint = c.slotLimited && c.spec.capacity.cpu > 0 && (c.spec.capacity.slots ?? 0) > 0;
  c.jointLevelKey = joint ? JOINT_LEVELS.map(() => new Float64Array(size).fill(Number.POSITIVE_INFINITY)) : [];
  c.cpuLevelKey = LEVELS.map(() => new Float64Array(size).fill(Number.POSITIVE_INFINITY));
  c.memLevelKey = LEVELS.map(() => new Float64Array(size).fill(Number.POSITIVE_INFINITY));
  for (let i = 0; i < c.hosts.length; i++) setLeaf(index, c, i);
  pullTree(c);
}

/** Sets every inner node of a class's tree from its leaves. */
export function pullTree(c: HostClass): void {
  for (let node = c.leafBase - 1; node >= 1; node--) pull(c, node);
}

function setLeaf(index: TreeHosts, c: HostClass, pos: number): void {
  const h = c.hosts[pos]!;
  const node = c.leafBase + pos;
  // the class's room: this host's old leaf values (-1 before its first) out, its new ones in
  const room = c.room;
  room[0] = room[0]! + Math.max(0, index.freeCpu[h]!) - Math.max(0, c.maxCpu[node]!);
  room[1] = room[1]! + Math.max(0, index.freeMem[h]!) - Math.max(0, c.maxMem[node]!);
  if (c.slotLimited) room[2] = room[2]! + Math.max(0, index.freeSlots[h]!) - Math.max(0, c.maxSlots[node]!);
  room[3] = room[3]! + Math.max(0, index.freeGpu[h]!) - Math.max(0, c.maxGpu[node]!);
  c.maxCpu[node] = index.freeCpu[h]!;
  c.maxMem[node] = index.freeMem[h]!;
  c.maxSlots[node] = index.freeSlots[h]!;
  c.maxGpu[node] = index.freeGpu[h]!;
  c.maxDom[node] = index.maxDomainFree(h);
  c.minKey[node] = index.key[h]!;
  c.firstRank[node] = h;
  const cpu = index.freeCpu[h]!;
  const mem = index.freeMem[h]!;
  for (let k = 0; k < RATIOS.length; k++) c.ratioMax[k]![node] = Math.min(cpu, mem / RATIOS[k]!);
  const key = index.key[h]!;
  const cap = c.spec.capacity;
  for (let k = 0; k < LEVELS.length; k++) {
    c.cpuLevelKey[k]![node] = cpu >= LEVELS[k]! * cap.cpu ? key : Number.POSITIVE_INFINITY;
    c.memLevelKey[k]![node] = mem >= LEVELS[k]! * cap.memoryMb ? key : Number.POSITIVE_INFINITY;
  }
  if (c.jointLevelKey.length > 0) {
    const share = jointShare(c, cpu, index.freeSlots[h]!);
    for (let k = 0; k < JOINT_LEVELS.length; k++) c.jointLevelKey[k]![node] = share >= JOINT_LEVELS[k]! ? key : Number.POSITIVE_INFINITY;
  }
}

/** Sets a tree node from its two children; whether any of its values changed (if none did, no ancestor's can). */
function pull(c: HostClass, node: number): boolean {
  const l = 2 * node;
  const r = l + 1;
  let changed = setMax(c.maxCpu, node, l, r);
  changed = setMax(c.maxMem, node, l, r) || changed;
  changed = setMax(c.maxSlots, node, l, r) || changed;
  changed = setMax(c.maxGpu, node, l, r) || changed;
  changed = setMax(c.maxDom, node, l, r) || changed;
  changed = setMin(c.minKey, node, l, r) || changed;
  changed = setMin(c.firstRank, node, l, r) || changed;
  for (const m of c.ratioMax) changed = setMax(m, node, l, r) || changed;
  for (const m of c.cpuLevelKey) changed = setMin(m, node, l, r) || changed;
  for (const m of c.memLevelKey) changed = setMin(m, node, l, r) || changed;
  for (const m of c.jointLevelKey) changed = setMin(m, node, l, r) || changed;
  return changed;
}

function setMax(a: Float64Array, node: number, l: number, r: number): boolean {
  const v = Math.max(a[l]!, a[r]!);
  if (a[node] === v) return false;
  a[node] = v;
  return true;
}

function setMin(a: Float64Array, node: number, l: number, r: number): boolean {
  const v = Math.min(a[l]!, a[r]!);
  if (a[node] === v) return false;
  a[node] = v;
  return true;
}

/** Sets a host's leaf from its free values and its ancestors up to the first that did not change (only the leaf while the trees are deferred). */
export function updateLeaf(index: TreeHosts, c: HostClass, pos: number): void {
  setLeaf(index, c, pos);
  if (index.deferred !== null) {
    index.deferred.add(c, pos);
    return;
  }
  for (let node = (c.leafBase + pos) >> 1; node >= 1 && pull(c, node); node >>= 1);
}

/**
 * The leaves set while a class's inner nodes wait, by class; `flush` brings the inner nodes up to
 * date: the paths above those leaves, level by level, each node once and none above a node that
 * did not change.
 */
export class DeferredLeaves {
  private readonly byClass = new Map<HostClass, number[]>();

  /** Records that leaf `pos` of class `c` was set. */
  add(c: HostClass, pos: number): void {
    const list = this.byClass.get(c);
    if (list === undefined) this.byClass.set(c, [pos]);
    else list.push(pos);
  }

  /** Sets every inner node above the leaves recorded from its children, and forgets them. */
  flush(): void {
    for (const [c, positions] of this.byClass) pullPaths(c, positions);
    this.byClass.clear();
  }
}

// the inner nodes above leaves `positions` of a class's tree, from the lowest level up: a node is
// set when one of its children was set or changed (the same values as a pull per leaf)
function pullPaths(c: HostClass, positions: readonly number[]): void {
  // a tree of one host is its leaf alone (node 1): nothing above it
  if (c.leafBase < 2) return;
  const nodes = new Int32Array(positions.length);
  for (let i = 0; i < positions.length; i++) nodes[i] = (c.leafBase + positions[i]!) >> 1;
  nodes.sort();
  let n = nodes.length;
  while (n > 0) {
    // each level's parents overwrite its nodes in place (one parent at most per node read); the
    // parents of ascending nodes ascend, so duplicates are neighbours
    let out = 0;
    let last = -1;
    for (let i = 0; i < n; i++) {
      const node = nodes[i]!;
      if (node === last) continue;
      last = node;
      if (pull(c, node) && node > 1) nodes[out++] = node >> 1;
    }
    n = out;
  }
}
