import { canonicalJson } from '../canonical.ts';
import type { MemberResources, NodeSpec } from '../contract/types.ts';
import type { GpuPart } from './pickGpus.ts';
import { pickGpus } from './pickGpus.ts';

/** What one bucket asks of one host: the sums over its members, and its GPU parts. */
export interface BucketDemand {
  cpu: number;
  memoryMb: number;
  /** Members in the bucket (each uses one slot). */
  slots: number;
  /** GPU devices in all, for pruning. */
  gpus: number;
  /** Devices per part with their least memory (one part per role in the bucket). */
  parts: readonly GpuPart[];
  /** Every device of the bucket within one NVLink domain. */
  locality: boolean;
}

/** A host as the index is built from it: its spec and what is debited on it. */
export interface HostSource {
  spec: NodeSpec;
  usedCpu: number;
  usedMemoryMb: number;
  usedSlots: number;
  gpusUsed: readonly number[];
}

/** Hosts with identical labels, capacity and GPU layout: select and static checks run once per class. */
export interface HostClass {
  index: number;
  spec: NodeSpec;
  /** Global host indices (ascending node id). */
  hosts: number[];
  /** Leaves start here in the tree arrays (a power of two). */
  leafBase: number;
  maxCpu: Float64Array;
  maxMem: Float64Array;
  maxSlots: Float64Array;
  maxGpu: Float64Array;
  maxDom: Float64Array;
  minKey: Float64Array;
  firstRank: Float64Array;
  /** Per ratio ρ of RATIOS: the largest min(free cpu, free memory / ρ) below each tree node. */
  ratioMax: Float64Array[];
  /** Per level of LEVELS: the least key below each tree node among hosts with that share of CPU (of memory) free. */
  cpuLevelKey: Float64Array[];
  memLevelKey: Float64Array[];
  wCpu: number;
  wMem: number;
  wSlots: number;
  wGpu: number;
  slotLimited: boolean;
  /** GPU device ids, memory and compact NVLink domain per device index (ascending id). */
  gpuIds: number[];
  gpuMem: number[];
  gpuDom: number[];
  /** Least memory of any device (0 without GPUs). */
  minGpuMem: number;
  /** NVLink domain number of each compact domain index (ascending). */
  domains: number[];
  /** Demands no host of the class can take for the rest of the session (free only shrinks). */
  negatives: BucketDemand[];
  /**
   * Free CPU, memory, slots (Infinity without a slot limit) and GPU devices summed over the class's
   * hosts, each host's counted from 0 (a host over its capacity adds nothing): kept with every leaf.
   */
  room: Float64Array;
}

/** The undo record of one debit on the index: the host's values before it, restored exactly. */
export interface IndexUndo {
  host: number;
  cpu: number;
  mem: number;
  slots: number;
  key: number;
  gpuIndices: number[];
}

// Binpack weight of a dimension: ⌊2^32 / capacity⌋, so weight × free is the free fraction scaled to
// an integer and sums stay exact doubles (below 2^53 for any capacity under 2^50).
const SCALE = 2 ** 32;

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

/** The highest level index whose share of `capacity` is at most `need` (-1: none). */
export function levelOf(need: number, capacity: number): number {
  let level = -1;
  for (let i = 0; i < LEVELS.length; i++) if (LEVELS[i]! * capacity <= need) level = i;
  return level;
}
const NO_LIMIT = Number.POSITIVE_INFINITY;
const NEGATIVE_MEMO = 8;

function weight(capacity: number): number {
  return capacity > 0 ? Math.max(1, Math.floor(SCALE / capacity)) : 0;
}

const classKeys = new WeakMap<NodeSpec, string>();
const readKeys = new WeakMap<NodeSpec, { labels: ReadonlySet<string>; key: string }>();

/**
 * The class key of a node spec (labels, capacity and GPU layout), memoised per immutable spec;
 * with `labels`, only those labels count (hosts that differ in labels nothing reads share a class).
 */
export function hostClassKey(spec: NodeSpec, labels: ReadonlySet<string> | null = null): string {
  if (labels !== null) {
    const memo = readKeys.get(spec);
    if (memo !== undefined && memo.labels === labels) return memo.key;
    const kept: Record<string, unknown> = {};
    for (const name of Object.keys(spec.labels)) if (labels.has(name)) kept[name] = spec.labels[name];
    const key = canonicalJson({ labels: kept, capacity: spec.capacity, gpus: spec.gpus });
    readKeys.set(spec, { labels, key });
    return key;
  }
  let key = classKeys.get(spec);
  if (key === undefined) {
    key = canonicalJson({ labels: spec.labels, capacity: spec.capacity, gpus: spec.gpus });
    classKeys.set(spec, key);
  }
  return key;
}

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
   * How the session's memo of infeasible demands is used: `on` reads and records it; `read` only
   * reads it (a search that passes hosts over to spare a reservation: what the memo says still
   * holds, but what fails then says nothing about the cluster); `off` neither (a plan for a later
   * time, when more is free than now).
   */
  memo: 'on' | 'read' | 'off' = 'on';
  /**
   * Whether searches may skip what the index proves cannot fit (plans whose largest bucket no host
   * takes, roles the classes' room cannot hold) and planning may find running gangs through their
   * hosts: on, except to prove that doing so changes no decision.
   */
  prune = true;
  private hostNumbers: Map<string, number> | null = null;
  /** Classes whose trees wait for `flushTrees` (null: trees are kept up to date at every change). */
  deferred: Set<HostClass> | null = null;
  /**
   * Per class, the free CPU, memory, slots and GPU devices summed over its hosts (four values per
   * class, at 4 × class index), kept from the first `classFree()` on (topology placement bounds a
   * domain by them); null until then, so placement without topology never pays for it.
   */
  private freeSums: Float64Array | null = null;

  /** Hosts a committed debit (or a preemption's release) landed on this session, in order: reason counts refresh only these. */
  touched: number[] = [];

  /**
   * Builds the index from hosts sorted by node id (the rank order every tie falls back to). With
   * `labels`, hosts are grouped into classes by those labels only (the labels some job reads: a
   * class's `spec` then stands for its hosts in those labels, capacity and GPUs, not in others).
   */
  constructor(sources: readonly HostSource[], readonly labels: ReadonlySet<string> | null = null) {
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
    this.classes = [];
    const byKey = new Map<string, HostClass>();
    let gpuTotal = 0;
    let domTotal = 0;
    for (let h = 0; h < n; h++) {
      const spec = sources[h]!.spec;
      const k = hostClassKey(spec, labels);
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
    const undo: IndexUndo = { host: h, cpu: this.freeCpu[h]!, mem: this.freeMem[h]!, slots: this.freeSlots[h]!, key: this.key[h]!, gpuIndices: [...gpuIndices] };
    const c = this.classes[this.cls[h]!]!;
    if (this.freeSums !== null) this.addSums(c, -cpu, -mem, c.slotLimited ? -slots : 0, -gpuIndices.length);
    this.freeCpu[h] = undo.cpu - cpu;
    this.freeMem[h] = undo.mem - mem;
    if (c.slotLimited) this.freeSlots[h] = undo.slots - slots;
    for (const g of gpuIndices) {
      this.gpuFree[this.gpuBase[h]! + g] = 0;
      this.domFree[this.domBase[h]! + c.gpuDom[g]!]!--;
    }
    this.freeGpu[h] = this.freeGpu[h]! - gpuIndices.length;
    this.key[h] = this.hostKey(h, c);
    updateLeaf(this, c, this.leaf[h]!);
    return undo;
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
   * and leaves only, and each class's tree is rebuilt once at the end (cheaper than a path per
   * change when a large share of a class changes). No search may run in between.
   */
  deferTrees(): void {
    this.deferred ??= new Set();
  }

  /** Rebuilds the trees of the classes changed since `deferTrees`, and keeps trees up to date again. */
  flushTrees(): void {
    const dirty = this.deferred;
    this.deferred = null;
    if (dirty === null) return;
    for (const c of dirty) for (let node = c.leafBase - 1; node >= 1; node--) pull(c, node);
  }

  /** Forgets what a session learnt (negative memo, touched hosts, work counters) before the next one. */
  resetSession(): void {
    for (const c of this.classes) c.negatives = [];
    this.touched = [];
    this.nodeVisits = 0;
    this.leafVisits = 0;
  }

  /** Records a committed debit on host `h`: cached per-host reason counts refresh it. */
  touch(h: number): void {
    this.touched.push(h);
  }

  /**
   * The most members of one role (per-member demand `r`) a host of the class could take now, by
   * its tree's root maxima per dimension and per ratio of memory to CPU: an upper bound (no host
   * takes more; a host search for a bucket of more finds none), 0 when none takes one.
   */
  mostMembers(c: HostClass, r: MemberResources, locality: boolean): number {
    let n = c.maxSlots[1]!;
    if (r.cpu > 0) n = Math.min(n, Math.floor(c.maxCpu[1]! / r.cpu));
    if (r.memoryMb > 0) n = Math.min(n, Math.floor(c.maxMem[1]! / r.memoryMb));
    if (r.gpus > 0) n = Math.min(n, Math.floor((locality ? c.maxDom[1]! : c.maxGpu[1]!) / r.gpus));
    for (let k = 0; k < RATIOS.length && n > 0; k++) {
      const per = Math.min(r.cpu, r.memoryMb / RATIOS[k]!);
      if (per > 0) n = Math.min(n, Math.floor(c.ratioMax[k]![1]! / per));
    }
    // a bucket that dominates a demand no host of the class took this session fails too
    if (this.memo !== 'off') for (let i = 0; i < c.negatives.length && n > 0; i++) n = Math.min(n, leastDominating(c.negatives[i]!, r, locality) - 1);
    return n;
  }

  /**
   * Whether a demand is known to fit no host of the class: more than an empty host of the class
   * offers, or it dominates a failure recorded this session.
   */
  knownInfeasible(c: HostClass, d: BucketDemand): boolean {
    const cap = c.spec.capacity;
    if (d.cpu > cap.cpu || d.memoryMb > cap.memoryMb || (c.slotLimited && d.slots > (cap.slots ?? 0))) return true;
    if (d.gpus > 0 && !devicesCanEverFit(c, d)) return true;
    if (this.memo === 'off') return false;
    for (const f of c.negatives) if (dominates(d, f)) return true;
    return false;
  }

  /**
   * Records that no host of the class can take a demand. Valid for the rest of the session
   * because free capacity only shrinks within a session (commits debit, failed attempts restore).
   */
  recordInfeasible(c: HostClass, d: BucketDemand): void {
    if (this.memo !== 'on' || this.knownInfeasible(c, d)) return;
    const kept = c.negatives.filter((f) => !dominates(f, d));
    if (kept.length >= NEGATIVE_MEMO) kept.shift();
    kept.push(d);
    c.negatives = kept;
  }
}

// Enough devices with the memory each part needs on an empty host (in one domain, with locality).
function devicesCanEverFit(c: HostClass, d: BucketDemand): boolean {
  if (d.gpus > c.gpuIds.length) return false;
  const domains = d.locality ? c.domains.length : 1;
  for (let dom = 0; dom < domains; dom++) {
    let ok = true;
    let used = 0;
    for (const part of d.parts) {
      let qualified = 0;
      for (let g = 0; g < c.gpuIds.length; g++) {
        if (c.gpuMem[g]! >= part.gpuMemoryMb && (!d.locality || c.gpuDom[g] === dom)) qualified++;
      }
      // parts share devices: the strictest need bounds each part, the total bounds all of them
      used += part.count;
      if (qualified < part.count) ok = false;
    }
    let all = 0;
    for (let g = 0; g < c.gpuIds.length; g++) if (!d.locality || c.gpuDom[g] === dom) all++;
    if (ok && used <= all) return true;
  }
  return false;
}

// The fewest members of `r` whose bucket dominates `f` (Infinity: none does), as `dominates` judges.
function leastDominating(f: BucketDemand, r: MemberResources, locality: boolean): number {
  if (f.gpus > 0 && (r.gpus === 0 || (f.locality && !locality) || f.parts.length !== 1 || r.gpuMemoryMb < f.parts[0]!.gpuMemoryMb)) return Number.POSITIVE_INFINITY;
  return Math.max(1, f.slots, atLeast(f.cpu, r.cpu), atLeast(f.memoryMb, r.memoryMb), atLeast(f.gpus, r.gpus));
}

// The fewest k with k × per ≥ need (0 when nothing is needed, Infinity when per is 0), exact
// even where the division rounds.
function atLeast(need: number, per: number): number {
  if (need <= 0) return 0;
  if (per <= 0) return Number.POSITIVE_INFINITY;
  let k = Math.ceil(need / per);
  while (k * per < need) k++;
  return k;
}

// d ≥ f in every dimension, so f failing everywhere means d fails everywhere.
function dominates(d: BucketDemand, f: BucketDemand): boolean {
  if (d.cpu < f.cpu || d.memoryMb < f.memoryMb || d.slots < f.slots || d.gpus < f.gpus) return false;
  if (f.gpus === 0) return true;
  if (f.locality && !d.locality) return false;
  // one part each: more devices, each needing at least as much memory
  if (f.parts.length !== 1 || d.parts.length !== 1) return false;
  return d.parts[0]!.gpuMemoryMb >= f.parts[0]!.gpuMemoryMb;
}

function newClass(index: number, spec: NodeSpec): HostClass {
  const gpus = [...spec.gpus].sort((a, b) => a.id - b.id);
  const domains = [...new Set(gpus.map((g) => g.nvlinkDomain))].sort((a, b) => a - b);
  const slotLimited = spec.capacity.slots !== undefined;
  return {
    index,
    spec,
    hosts: [],
    leafBase: 1,
    maxCpu: new Float64Array(0),
    maxMem: new Float64Array(0),
    maxSlots: new Float64Array(0),
    maxGpu: new Float64Array(0),
    maxDom: new Float64Array(0),
    minKey: new Float64Array(0),
    firstRank: new Float64Array(0),
    ratioMax: [],
    cpuLevelKey: [],
    memLevelKey: [],
    wCpu: weight(spec.capacity.cpu),
    wMem: weight(spec.capacity.memoryMb),
    wSlots: slotLimited ? weight(spec.capacity.slots ?? 0) : 0,
    wGpu: weight(gpus.length),
    slotLimited,
    gpuIds: gpus.map((g) => g.id),
    gpuMem: gpus.map((g) => g.memoryMb),
    gpuDom: gpus.map((g) => domains.indexOf(g.nvlinkDomain)),
    minGpuMem: gpus.length === 0 ? 0 : Math.min(...gpus.map((g) => g.memoryMb)),
    domains,
    negatives: [],
    room: Float64Array.of(0, 0, slotLimited ? 0 : NO_LIMIT, 0),
  };
}

function buildTree(index: HostIndex, c: HostClass): void {
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
  c.cpuLevelKey = LEVELS.map(() => new Float64Array(size).fill(Number.POSITIVE_INFINITY));
  c.memLevelKey = LEVELS.map(() => new Float64Array(size).fill(Number.POSITIVE_INFINITY));
  for (let i = 0; i < c.hosts.length; i++) setLeaf(index, c, i);
  for (let node = base - 1; node >= 1; node--) pull(c, node);
}

function setLeaf(index: HostIndex, c: HostClass, pos: number): void {
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

function updateLeaf(index: HostIndex, c: HostClass, pos: number): void {
  setLeaf(index, c, pos);
  if (index.deferred !== null) {
    index.deferred.add(c);
    return;
  }
  for (let node = (c.leafBase + pos) >> 1; node >= 1 && pull(c, node); node >>= 1);
}
