import type { NodeSpec } from '../contract/types.ts';
import type { BucketDemand } from './bucketDemand.ts';
import { newClass, NO_LIMIT } from './hostClass.ts';
import type { HostClass, HostSource } from './hostClass.ts';
import { DeferredLeaves, buildTree, updateLeaf } from './hostTrees.ts';
import { pickGpus } from './pickGpus.ts';
import { SessionMemo } from './sessionMemo.ts';
import { SpecMemo } from './specMemo.ts';
import type { EmptyKind } from './fitsEmptyCluster.ts';
import type { TopologyGroups } from './topologyDomains.ts';

/** The undo record of one debit on the index: the host's values before it, restored exactly. */
export interface IndexUndo {
  host: number;
  cpu: number;
  mem: number;
  slots: number;
  key: number;
  gpuIndices: readonly number[];
}

/** The devices of a debit that takes none: one frozen list for all (a debit copies what it is given; nothing writes to it). */
export const NO_DEVICES: readonly number[] = Object.freeze([]);

/**
 * A session-scoped index of the hosts that take members (up, not drained): per-host free
 * resources, and per class a max-tree over its hosts (in id order) that answers "the best host
 * for this bucket" by branch and bound without scanning the cluster. Debits update it in
 * O(log n); reversals restore the exact values they saved.
 */
export class HostIndex {
  readonly ids: string[];
  readonly specs: NodeSpec[];
  /** What each host was built or last refreshed from (null: must be refreshed before use). */
  readonly sources: (HostSource | null)[];
  readonly classes: HostClass[];
  readonly cls: Int32Array;
  readonly leaf: Int32Array;
  readonly freeCpu: Float64Array;
  readonly freeMem: Float64Array;
  readonly freeSlots: Float64Array;
  readonly freeGpu: Int32Array;
  readonly key: Float64Array;
  /** Per host, its devices' free flags (1 = free) start here in `gpuFree`. */
  readonly gpuBase: Int32Array;
  readonly gpuFree: Uint8Array;
  /** Per host, its domains' free device counts start here in `domFree`. */
  readonly domBase: Int32Array;
  readonly domFree: Int32Array;
  /** Tree nodes and leaves searches have opened (work counters for tests and the benchmark). */
  nodeVisits = 0;
  leafVisits = 0;
  /**
   * Whether searches may skip what the index proves cannot fit (plans whose largest bucket no host
   * takes, roles the classes' room cannot hold) and planning may find running gangs through their
   * hosts: on, except to prove that doing so changes no decision.
   */
  prune = true;
  private hostNumbers: Map<string, number> | null = null;
  /** Leaves set while the trees' inner nodes wait for `flushTrees` (null: trees are kept up to date at every change). */
  deferred: DeferredLeaves | null = null;
  private readonly leavesSet = new DeferredLeaves();
  /**
   * Per class, the free CPU, memory, slots and GPU devices summed over its hosts (four values per
   * class, at 4 × class index), kept from the first `classFree()` on (topology placement bounds a
   * domain by them); null until then, so placement without topology never pays for it.
   */
  private freeSums: Float64Array | null = null;

  // the text of each list of classes `classesKey` was asked for (a session keeps one list per select)
  private readonly classesKeys = new WeakMap<readonly HostClass[], string>();
  /** Lists of this index's classes grouped by a label (`topologyGroups`), by list and label: a session keeps one list per select. */
  readonly topologyGroups = new WeakMap<readonly HostClass[], Map<string, TopologyGroups>>();
  /** Lists of this index's classes grouped by kind of host (`fitsEmptyCluster`), by list. */
  readonly emptyKinds = new WeakMap<readonly HostClass[], readonly EmptyKind[]>();
  /** Whether a gang fits this cluster with every host empty, by gang shape and classes (`fitsEmptyCluster`). */
  readonly emptyFits = new SessionMemo<boolean>();
  /** Empty copies of some of this index's hosts (`fitsEmptyCluster`), by the classes and copies of each kind they were made for. */
  readonly emptyCopies = new SessionMemo<HostIndex>();

  /** Hosts a committed debit (or a preemption's release) landed on this session, in order: reason counts refresh only these. */
  touched: number[] = [];
  /** Per host, its latest place in `touched` this session (meaningless for a host not in it): a refresh reads each host once, at its latest entry. */
  readonly lastTouch: Int32Array;
  // lists of one member by member number, made once (see memberList)
  private readonly oneMember: number[][] = [];

  /**
   * Builds the index from hosts sorted by node id (the rank order every tie falls back to). With
   * `labels`, hosts are grouped into classes by those labels only (the labels some job reads: a
   * class's `spec` then stands for its hosts in those labels, capacity and GPUs, not in others).
   * `memo` is what its owner keeps of the specs (a turn context's, through its `HostIndexCache`).
   */
  constructor(sources: readonly HostSource[], readonly labels: ReadonlySet<string> | null = null, readonly memo: SpecMemo = new SpecMemo()) {
    const n = sources.length;
    this.sources = [...sources];
    this.ids = sources.map((s) => s.spec.id);
    this.specs = sources.map((s) => s.spec);
    this.cls = new Int32Array(n);
    this.leaf = new Int32Array(n);
    this.freeCpu = new Float64Array(n);
    this.freeMem = new Float64Array(n);
    this.freeSlots = new Float64Array(n);
    this.freeGpu = new Int32Array(n);
    this.key = new Float64Array(n);
    this.gpuBase = new Int32Array(n);
    this.domBase = new Int32Array(n);
    this.lastTouch = new Int32Array(n);
    this.classes = [];
    const byKey = new Map<string, HostClass>();
    let gpuTotal = 0;
    let domTotal = 0;
    for (let h = 0; h < n; h++) {
      const spec = sources[h]!.spec;
      const k = memo.hostClassKey(spec, labels);
      let c = byKey.get(k);
      if (c === undefined) {
        c = newClass(this.classes.length, spec);
        byKey.set(k, c);
        this.classes.push(c);
      }
      this.cls[h] = c.index;
      this.leaf[h] = c.hosts.length;
      c.hosts.push(h);
      this.gpuBase[h] = gpuTotal;
      this.domBase[h] = domTotal;
      gpuTotal += c.gpuIds.length;
      domTotal += c.domains.length;
    }
    this.gpuFree = new Uint8Array(gpuTotal);
    this.domFree = new Int32Array(domTotal);
    for (let h = 0; h < n; h++) {
      const s = sources[h]!;
      const c = this.classes[this.cls[h]!]!;
      this.freeCpu[h] = s.spec.capacity.cpu - s.usedCpu;
      this.freeMem[h] = s.spec.capacity.memoryMb - s.usedMemoryMb;
      this.freeSlots[h] = c.slotLimited ? (s.spec.capacity.slots ?? 0) - s.usedSlots : NO_LIMIT;
      const used = new Set(s.gpusUsed);
      let free = 0;
      for (let g = 0; g < c.gpuIds.length; g++) {
        if (used.has(c.gpuIds[g]!)) continue;
        this.gpuFree[this.gpuBase[h]! + g] = 1;
        this.domFree[this.domBase[h]! + c.gpuDom[g]!]!++;
        free++;
      }
      this.freeGpu[h] = free;
      this.key[h] = this.hostKey(h, c);
    }
    for (const c of this.classes) buildTree(this, c);
  }

  /** A list of this index's classes as text (their indices), made once per list. */
  classesKey(classes: readonly HostClass[]): string {
    let key = this.classesKeys.get(classes);
    if (key === undefined) {
      key = classes.map((c) => c.index).join(',');
      this.classesKeys.set(classes, key);
    }
    return key;
  }

  /** Host number by node id (built on first use). */
  get hostOf(): ReadonlyMap<string, number> {
    if (this.hostNumbers === null) {
      const map = new Map<string, number>();
      this.ids.forEach((id, h) => map.set(id, h));
      this.hostNumbers = map;
    }
    return this.hostNumbers;
  }

  /** The binpack key of a host: Σ weight × free; minus a bucket's demand key it is the host's score. */
  hostKey(h: number, c: HostClass): number {
    return c.wCpu * this.freeCpu[h]! + c.wMem * this.freeMem[h]! + (c.slotLimited ? c.wSlots * this.freeSlots[h]! : 0)
      + c.wGpu * this.freeGpu[h]!;
  }

  /** Σ weight × demand for a class: a host's key minus this is its binpack score after the bucket. */
  demandKey(c: HostClass, d: BucketDemand): number {
    return c.wCpu * d.cpu + c.wMem * d.memoryMb + (c.slotLimited ? c.wSlots * d.slots : 0) + c.wGpu * d.gpus;
  }

  /** Largest number of free devices in one NVLink domain of a host. */
  maxDomainFree(h: number): number {
    const c = this.classes[this.cls[h]!]!;
    let best = 0;
    const base = this.domBase[h]!;
    for (let d = 0; d < c.domains.length; d++) best = Math.max(best, this.domFree[base + d]!);
    return best;
  }

  /**
   * Whether host `h` can take the bucket now; with a pinned domain (the gang already holds GPUs
   * of that domain on the host, under gpuLocality) its devices must come from that domain.
   */
  fits(h: number, d: BucketDemand, pin: number): boolean {
    if (this.freeCpu[h]! < d.cpu || this.freeMem[h]! < d.memoryMb || this.freeSlots[h]! < d.slots) return false;
    if (d.gpus === 0) return true;
    if (this.freeGpu[h]! < d.gpus) return false;
    const c = this.classes[this.cls[h]!]!;
    if (d.parts.length === 1 && d.parts[0]!.gpuMemoryMb <= c.minGpuMem) {
      // every device has the memory: free counts (per domain under locality) decide
      if (!d.locality) return true;
      return (pin >= 0 ? this.domFree[this.domBase[h]! + pin]! : this.maxDomainFree(h)) >= d.gpus;
    }
    return pickGpus(this, h, d.parts, d.locality, pin) !== null;
  }

  /** Debits a bucket on host `h` (device indices already chosen) and returns the exact undo. */
  debit(h: number, cpu: number, mem: number, slots: number, gpuIndices: readonly number[]): IndexUndo {
    const undo: IndexUndo = { host: h, cpu: this.freeCpu[h]!, mem: this.freeMem[h]!, slots: this.freeSlots[h]!, key: this.key[h]!, gpuIndices: gpuIndices.length === 0 ? NO_DEVICES : gpuIndices.slice() };
    this.take(h, cpu, mem, slots, gpuIndices);
    return undo;
  }

  /** Debits a bucket on host `h` like `debit`, keeping no undo (the caller gives it back by `credit`). */
  take(h: number, cpu: number, mem: number, slots: number, gpuIndices: readonly number[]): void {
    const c = this.classes[this.cls[h]!]!;
    if (this.freeSums !== null) this.addSums(c, -cpu, -mem, c.slotLimited ? -slots : 0, -gpuIndices.length);
    this.freeCpu[h] = this.freeCpu[h]! - cpu;
    this.freeMem[h] = this.freeMem[h]! - mem;
    if (c.slotLimited) this.freeSlots[h] = this.freeSlots[h]! - slots;
    for (const g of gpuIndices) {
      this.gpuFree[this.gpuBase[h]! + g] = 0;
      this.domFree[this.domBase[h]! + c.gpuDom[g]!]!--;
    }
    this.freeGpu[h] = this.freeGpu[h]! - gpuIndices.length;
    this.key[h] = this.hostKey(h, c);
    updateLeaf(this, c, this.leaf[h]!);
  }

  /** Gives resources and devices back to host `h` (the inverse of a `debit` of the same amounts, whatever happened between). */
  credit(h: number, cpu: number, mem: number, slots: number, gpuIndices: readonly number[]): void {
    const c = this.classes[this.cls[h]!]!;
    if (this.freeSums !== null) this.addSums(c, cpu, mem, c.slotLimited ? slots : 0, gpuIndices.length);
    this.freeCpu[h] = this.freeCpu[h]! + cpu;
    this.freeMem[h] = this.freeMem[h]! + mem;
    if (c.slotLimited) this.freeSlots[h] = this.freeSlots[h]! + slots;
    for (const g of gpuIndices) {
      this.gpuFree[this.gpuBase[h]! + g] = 1;
      this.domFree[this.domBase[h]! + c.gpuDom[g]!]!++;
    }
    this.freeGpu[h] = this.freeGpu[h]! + gpuIndices.length;
    this.key[h] = this.hostKey(h, c);
    updateLeaf(this, c, this.leaf[h]!);
  }

  /** Restores a host to the values saved by `debit` (undo records are replayed last first). */
  restore(undo: IndexUndo): void {
    const h = undo.host;
    const c = this.classes[this.cls[h]!]!;
    if (this.freeSums !== null) {
      this.addSums(c, undo.cpu - this.freeCpu[h]!, undo.mem - this.freeMem[h]!, c.slotLimited ? undo.slots - this.freeSlots[h]! : 0, undo.gpuIndices.length);
    }
    this.freeCpu[h] = undo.cpu;
    this.freeMem[h] = undo.mem;
    this.freeSlots[h] = undo.slots;
    for (const g of undo.gpuIndices) {
      this.gpuFree[this.gpuBase[h]! + g] = 1;
      this.domFree[this.domBase[h]! + c.gpuDom[g]!]!++;
    }
    this.freeGpu[h] = this.freeGpu[h]! + undo.gpuIndices.length;
    this.key[h] = undo.key;
    updateLeaf(this, c, this.leaf[h]!);
  }

  /** Sets host `h`'s free values from what is used on it (as the constructor does) and its tree leaf. */
  refresh(h: number, s: HostSource): void {
    const c = this.classes[this.cls[h]!]!;
    const before = this.freeSums === null ? null : [this.freeCpu[h]!, this.freeMem[h]!, this.freeSlots[h]!, this.freeGpu[h]!] as const;
    this.freeCpu[h] = s.spec.capacity.cpu - s.usedCpu;
    this.freeMem[h] = s.spec.capacity.memoryMb - s.usedMemoryMb;
    this.freeSlots[h] = c.slotLimited ? (s.spec.capacity.slots ?? 0) - s.usedSlots : NO_LIMIT;
    const used = new Set(s.gpusUsed);
    const gpuBase = this.gpuBase[h]!;
    const domBase = this.domBase[h]!;
    for (let d = 0; d < c.domains.length; d++) this.domFree[domBase + d] = 0;
    let free = 0;
    for (let g = 0; g < c.gpuIds.length; g++) {
      const isFree = !used.has(c.gpuIds[g]!);
      this.gpuFree[gpuBase + g] = isFree ? 1 : 0;
      if (!isFree) continue;
      this.domFree[domBase + c.gpuDom[g]!]!++;
      free++;
    }
    this.freeGpu[h] = free;
    this.key[h] = this.hostKey(h, c);
    updateLeaf(this, c, this.leaf[h]!);
    if (before !== null) {
      this.addSums(c, this.freeCpu[h]! - before[0], this.freeMem[h]! - before[1], c.slotLimited ? this.freeSlots[h]! - before[2] : 0, free - before[3]);
    }
  }

  /**
   * The free CPU, memory, slots (Infinity for a class without a slot limit) and GPU devices summed
   * over each class's hosts, at 4 × class index; built at the first call, kept up to date after.
   */
  classFree(): Float64Array {
    if (this.freeSums !== null) return this.freeSums;
    const sums = new Float64Array(4 * this.classes.length);
    for (let h = 0; h < this.ids.length; h++) {
      const b = 4 * this.cls[h]!;
      sums[b] = sums[b]! + this.freeCpu[h]!;
      sums[b + 1] = sums[b + 1]! + this.freeMem[h]!;
      sums[b + 2] = sums[b + 2]! + this.freeSlots[h]!;
      sums[b + 3] = sums[b + 3]! + this.freeGpu[h]!;
    }
    this.freeSums = sums;
    return sums;
  }

  private addSums(c: HostClass, cpu: number, mem: number, slots: number, gpus: number): void {
    const sums = this.freeSums!;
    const b = 4 * c.index;
    sums[b] = sums[b]! + cpu;
    sums[b + 1] = sums[b + 1]! + mem;
    sums[b + 2] = sums[b + 2]! + slots;
    sums[b + 3] = sums[b + 3]! + gpus;
  }

  /**
   * Changes many hosts at once: until `flushTrees`, debits and credits update the hosts' values
   * and leaves only, and the paths above them are set once at the end (each node once, where a
   * path per change would set the nodes near the root again and again). No search may run in
   * between. Returns whether this call deferred them (false: a caller's deferral is in force, and
   * that caller flushes).
   */
  deferTrees(): boolean {
    if (this.deferred !== null) return false;
    this.deferred = this.leavesSet;
    return true;
  }

  /** Sets the trees' inner nodes above the leaves changed since `deferTrees`, and keeps trees up to date again. */
  flushTrees(): void {
    const dirty = this.deferred;
    this.deferred = null;
    dirty?.flush();
  }

  /** Forgets what a session learnt (negative memo, touched hosts, work counters, memos it did not use) before the next one. */
  resetSession(): void {
    for (const c of this.classes) c.negatives = [];
    this.emptyFits.nextSession();
    this.emptyCopies.nextSession();
    this.touched = [];
    this.nodeVisits = 0;
    this.leafVisits = 0;
  }

  /**
   * The member numbers `first` to `first + n - 1` of one debit. A list of one member is made once
   * and frozen, then shared by every debit of that member (as its events and the state keep it:
   * events' values are never mutated), so a gang of one-member buckets costs no list per plan.
   */
  memberList(first: number, n: number): number[] {
    if (n === 1) {
      let list = this.oneMember[first];
      if (list === undefined) {
        list = Object.freeze([first]) as number[];
        this.oneMember[first] = list;
      }
      return list;
    }
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = first + i;
    return out;
  }

  /** Records a committed debit on host `h`: cached per-host reason counts refresh it. */
  touch(h: number): void {
    this.lastTouch[h] = this.touched.length;
    this.touched.push(h);
  }
}
