import { knownInfeasible } from './failureMemo.ts';
import { JOINT_LEVELS, jointShare, levelOf, RATIOS } from './hostTrees.ts';
import type { BucketDemand } from './bucketDemand.ts';
import type { HostClass } from './hostClass.ts';
import type { HostIndex } from './hostIndex.ts';
import type { MemoMode } from './failureMemo.ts';

/** Pins a host to a compact NVLink domain index (or -1) for this bucket under gpuLocality. */
export type DomainPin = (host: number) => number;

const NO_PIN: DomainPin = () => -1;

/**
 * A fresh, lazy iterator over the hosts that can take one bucket, best first (DESIGN.md §5): hosts
 * of the given classes (those that pass the job's select; the index holds only up, undrained
 * hosts), not skipped (claimed by this plan), that fit the bucket now. Ranked by binpack score
 * (the host's weighted free capacity left after the bucket, lower first: big holes stay free),
 * ties by node id. Branch and bound over each class's max-tree: a subtree whose best free values
 * cannot hold the bucket is never opened, so a query does not scan the cluster.
 */
export class HostIterator implements IterableIterator<number> {
  private readonly bound: number[] = [];
  private readonly rank: number[] = [];
  /** Per heap entry, the slot of its class (its place in `slots`). */
  private readonly slot: number[] = [];
  private readonly node: number[] = [];
  /** The classes searched, one slot each; the per-class values below are by slot, sized to the search, not the index. */
  private readonly slots: HostClass[] = [];
  private readonly demandKeys: Float64Array;
  /** Per slot: the CPU, memory and joint CPU-and-slots levels the bucket needs (-1: below the lowest, or none). */
  private readonly cpuLevel: Int8Array;
  private readonly memLevel: Int8Array;
  private readonly jointLevel: Int8Array;
  private readonly ratioFloor: number[];
  private size = 0;

  constructor(
    private readonly index: HostIndex,
    private readonly demand: BucketDemand,
    classes: readonly HostClass[],
    memo: MemoMode,
    private readonly skip: (host: number) => boolean = () => false,
    private readonly pin: DomainPin = NO_PIN,
  ) {
    this.ratioFloor = RATIOS.map((rho) => Math.min(demand.cpu, demand.memoryMb / rho));
    // classes whose tree root cannot hold the bucket are left out before anything is sized for them
    // (on a busy cluster most are: a search there then costs no more than these checks)
    for (const c of classes) {
      if (c.hosts.length === 0 || !this.mayHold(c, 1) || knownInfeasible(c, demand, memo)) continue;
      this.slots.push(c);
    }
    const n = this.slots.length;
    this.demandKeys = new Float64Array(n);
    this.cpuLevel = new Int8Array(n);
    this.memLevel = new Int8Array(n);
    this.jointLevel = new Int8Array(n);
    for (let k = 0; k < n; k++) {
      const c = this.slots[k]!;
      const dk = index.demandKey(c, demand);
      this.demandKeys[k] = dk;
      this.cpuLevel[k] = levelOf(demand.cpu, c.spec.capacity.cpu);
      this.memLevel[k] = levelOf(demand.memoryMb, c.spec.capacity.memoryMb);
      this.jointLevel[k] = c.jointLevelKey.length > 0 ? levelOf(jointShare(c, demand.cpu, demand.slots), 1, JOINT_LEVELS) : -1;
      this.offer(k, 1);
    }
  }

  /** The classes the search looks into: those given, less those whose tree root or the memo of failures rules the bucket out. */
  get searched(): readonly HostClass[] {
    return this.slots;
  }

  /** The next host (global index) that can take the bucket, or -1 when there is none. */
  nextHost(): number {
    const { index, demand } = this;
    while (this.size > 0) {
      const k = this.slot[0]!;
      const c = this.slots[k]!;
      const node = this.node[0]!;
      this.pop();
      if (node >= c.leafBase) {
        index.leafVisits++;
        const h = c.hosts[node - c.leafBase]!;
        if (!this.skip(h) && index.fits(h, demand, this.pin(h))) return h;
        continue;
      }
      index.nodeVisits++;
      this.offer(k, 2 * node);
      this.offer(k, 2 * node + 1);
    }
    return -1;
  }

  /** Iterator protocol over `nextHost`. */
  next(): IteratorResult<number> {
    const h = this.nextHost();
    return h < 0 ? { done: true, value: undefined } : { done: false, value: h };
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this;
  }

  // open a subtree only if its best values could hold the bucket (per dimension, and per ratio of
  // memory to CPU, so that CPU on one host and memory on another do not look like a fit)
  private offer(k: number, node: number): void {
    const c = this.slots[k]!;
    if (!this.mayHold(c, node)) return;
    // the least key among hosts with the share of CPU and memory the bucket needs bounds the score
    let key = c.minKey[node]!;
    const lc = this.cpuLevel[k]!;
    const lm = this.memLevel[k]!;
    if (lc >= 0) key = Math.max(key, c.cpuLevelKey[lc]![node]!);
    if (lm >= 0) key = Math.max(key, c.memLevelKey[lm]![node]!);
    const lj = this.jointLevel[k]!;
    if (lj >= 0) key = Math.max(key, c.jointLevelKey[lj]![node]!);
    if (key === Number.POSITIVE_INFINITY) return;
    this.push(key - this.demandKeys[k]!, c.firstRank[node]!, k, node);
  }

  // whether the subtree's best values could hold the bucket (per dimension and per ratio)
  private mayHold(c: HostClass, node: number): boolean {
    const d = this.demand;
    if (c.maxCpu[node]! < d.cpu || c.maxMem[node]! < d.memoryMb || c.maxSlots[node]! < d.slots) return false;
    if (d.gpus > 0 && (d.locality ? c.maxDom[node]! : c.maxGpu[node]!) < d.gpus) return false;
    for (let k = 0; k < RATIOS.length; k++) if (c.ratioMax[k]![node]! < this.ratioFloor[k]!) return false;
    return true;
  }

  private less(i: number, j: number): boolean {
    const bi = this.bound[i]!;
    const bj = this.bound[j]!;
    return bi < bj || (bi === bj && this.rank[i]! < this.rank[j]!);
  }

  private swap(i: number, j: number): void {
    const b = this.bound[i]!;
    this.bound[i] = this.bound[j]!;
    this.bound[j] = b;
    const r = this.rank[i]!;
    this.rank[i] = this.rank[j]!;
    this.rank[j] = r;
    const k = this.slot[i]!;
    this.slot[i] = this.slot[j]!;
    this.slot[j] = k;
    const n = this.node[i]!;
    this.node[i] = this.node[j]!;
    this.node[j] = n;
  }

  private push(bound: number, rank: number, k: number, node: number): void {
    let i = this.size++;
    this.bound[i] = bound;
    this.rank[i] = rank;
    this.slot[i] = k;
    this.node[i] = node;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private pop(): void {
    const last = --this.size;
    if (last > 0) this.swap(0, last);
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= last) break;
      const r = l + 1;
      const m = r < last && this.less(r, l) ? r : l;
      if (!this.less(m, i)) break;
      this.swap(i, m);
      i = m;
    }
  }
}
