import type { MemberResources } from '../contract/types.ts';
import type { HostClass } from './hostClass.ts';
import type { HostIndex } from './hostIndex.ts';

/** Why one host cannot take one member now (DESIGN.md §4 `reason.hosts` keys). */
export type HostReason =
  | 'node-lost'
  | 'drained'
  | 'select-mismatch'
  | 'insufficient-cpu'
  | 'insufficient-memory'
  | 'insufficient-slots'
  | 'insufficient-gpu'
  | 'insufficient-gpu-memory'
  | 'gpu-locality';

// The order reasons are checked in (a host counts once, under the first that applies) and listed in.
const ORDER: readonly HostReason[] = [
  'node-lost', 'drained', 'select-mismatch', 'insufficient-cpu', 'insufficient-memory', 'insufficient-slots',
  'insufficient-gpu', 'insufficient-gpu-memory', 'gpu-locality',
];

/** Hosts counted for one member: per reason, and how many could take it now. */
export interface HostCounts {
  hosts: Record<string, number>;
  /** Up, undrained hosts that pass select and could take one member now. */
  fit: number;
  /** Up, undrained hosts that pass select. */
  eligible: number;
  /** Every known host, lost and drained included. */
  total: number;
}

/** Nodes the index leaves out (they take no members), counted for pend reasons. */
export interface OfflineHosts {
  lost: number;
  drained: number;
}

/**
 * Why no host of a class could take one member even when empty (its capacity), or null. A host
 * that can never take the member is counted under that reason rather than under whatever happens
 * to be in use on it now: it says what would have to change.
 */
export function classReason(c: HostClass, r: MemberResources, locality: boolean): HostReason | null {
  const cap = c.spec.capacity;
  if (cap.cpu < r.cpu) return 'insufficient-cpu';
  if (cap.memoryMb < r.memoryMb) return 'insufficient-memory';
  if (c.slotLimited && (cap.slots ?? 0) < 1) return 'insufficient-slots';
  if (r.gpus === 0) return null;
  if (c.gpuIds.length < r.gpus) return 'insufficient-gpu';
  const perDomain = new Array<number>(c.domains.length).fill(0);
  let qualified = 0;
  for (let g = 0; g < c.gpuIds.length; g++) {
    if (c.gpuMem[g]! < r.gpuMemoryMb) continue;
    qualified++;
    perDomain[c.gpuDom[g]!]!++;
  }
  if (qualified < r.gpus) return 'insufficient-gpu-memory';
  if (locality && Math.max(...perDomain) < r.gpus) return 'gpu-locality';
  return null;
}

/**
 * The first reason host `h` cannot take one member of this shape now, or null if it can: what its
 * capacity never allows (`classReason`), else what is in use on it now.
 */
export function hostReason(index: HostIndex, h: number, r: MemberResources, locality: boolean): HostReason | null {
  const never = classReason(index.classes[index.cls[h]!]!, r, locality);
  if (never !== null) return never;
  const code = freeCode(index, h, r, locality);
  return code === FITS ? null : ORDER[code - 1]!;
}

// A host's reason code: 0 when it fits, else 1 + the reason's place in ORDER.
const FITS = 0;
const CPU = ORDER.indexOf('insufficient-cpu') + 1;
const MEMORY = ORDER.indexOf('insufficient-memory') + 1;
const SLOTS = ORDER.indexOf('insufficient-slots') + 1;
const GPU = ORDER.indexOf('insufficient-gpu') + 1;
const GPU_MEMORY = ORDER.indexOf('insufficient-gpu-memory') + 1;
const LOCALITY = ORDER.indexOf('gpu-locality') + 1;

// The code of the first dimension whose free amount on host `h` cannot take one member (its capacity can).
function freeCode(index: HostIndex, h: number, r: MemberResources, locality: boolean): number {
  if (index.freeCpu[h]! < r.cpu) return CPU;
  if (index.freeMem[h]! < r.memoryMb) return MEMORY;
  if (index.freeSlots[h]! < 1) return SLOTS;
  if (r.gpus === 0) return FITS;
  if (index.freeGpu[h]! < r.gpus) return GPU;
  const c = index.classes[index.cls[h]!]!;
  if (r.gpuMemoryMb <= c.minGpuMem) {
    // every device has the memory: the free counts per domain answer without a scan
    return locality && index.maxDomainFree(h) < r.gpus ? LOCALITY : FITS;
  }
  const gpuBase = index.gpuBase[h]!;
  let qualified = 0;
  const perDomain = new Array<number>(c.domains.length).fill(0);
  for (let g = 0; g < c.gpuIds.length; g++) {
    if (index.gpuFree[gpuBase + g] !== 1 || c.gpuMem[g]! < r.gpuMemoryMb) continue;
    qualified++;
    perDomain[c.gpuDom[g]!]!++;
  }
  if (qualified < r.gpus) return GPU_MEMORY;
  if (locality && Math.max(...perDomain) < r.gpus) return LOCALITY;
  return FITS;
}

/**
 * One member shape's counts: per host, per class, and summed over every class (typed arrays over
 * all hosts and classes, a handful per shape: a cluster split into hundreds of classes, as a rack
 * label splits it, would otherwise cost two typed arrays per class for every shape).
 */
interface ShapeCounts {
  /** How much of the index's `touched` log these counts include. */
  seen: number;
  /** Reason code per host (0: fits, else 1 + index in ORDER). */
  reasons: Uint8Array;
  /** Per class, its hosts per reason (ORDER.length values at ORDER.length × class index). */
  classCounts: Int32Array;
  /** Per class, its hosts that could take the member now. */
  classFit: Int32Array;
  /** Per class, 1 when no host of it could ever take the member (counted by `classReason`). */
  never: Uint8Array;
  counts: Int32Array;
  fit: number;
  /** Changes to the counts so far: sums over some classes made at the same version still hold. */
  version: number;
  /** Sums over the classes of a select (a session keeps one array per select), by that array. */
  matching: WeakMap<readonly HostClass[], MatchingSums>;
}

/** A shape's counts summed over some classes, as they were at `version`. */
interface MatchingSums {
  version: number;
  counts: Int32Array;
  fit: number;
  eligible: number;
}

/**
 * Counts hosts per reason for one member, per member shape: every class counted once, then
 * refreshed for the hosts a commit touched since (a failed attempt restores the index exactly, so
 * only commits change free capacity): no rescan of a class per written abort, and no pass over
 * every class when a job has no select (its counts are the sums kept over all of them).
 */
export class HostCounter {
  private readonly cache = new Map<string, ShapeCounts>();

  constructor(private readonly index: HostIndex, private readonly offline: OfflineHosts) {}

  /** Host counts for one member of `r` against the hosts that pass select (`matching`). */
  count(matching: readonly HostClass[], r: MemberResources, locality: boolean): HostCounts {
    const shape = this.shapeCounts(r, locality);
    // every class passes select: the shape's own sums
    const sums = matching.length === this.index.classes.length ? { counts: shape.counts, fit: shape.fit, eligible: this.index.ids.length } : matchingSums(shape, matching);
    const totals = Array.from(sums.counts);
    const { fit, eligible } = sums;
    totals[0] = totals[0]! + this.offline.lost;
    totals[1] = totals[1]! + this.offline.drained;
    totals[2] = totals[2]! + this.index.ids.length - eligible;
    const hosts: Record<string, number> = {};
    ORDER.forEach((reason, i) => {
      if (totals[i]! > 0) hosts[reason] = totals[i]!;
    });
    return { hosts, fit, eligible, total: this.index.ids.length + this.offline.lost + this.offline.drained };
  }

  /** How many hosts of these classes could take one member of `r` now (counted and refreshed as `count` does). */
  fitIn(classes: readonly HostClass[], r: MemberResources, locality: boolean): number {
    const shape = this.shapeCounts(r, locality);
    let fit = 0;
    for (const c of classes) fit += shape.classFit[c.index]!;
    return fit;
  }

  // one member shape's counts, built on first use and brought up to the touched log
  private shapeCounts(r: MemberResources, locality: boolean): ShapeCounts {
    const key = `${r.cpu}/${r.memoryMb}/${r.gpus}/${r.gpus > 0 ? r.gpuMemoryMb : 0}/${locality && r.gpus > 0}`;
    const touched = this.index.touched;
    let shape = this.cache.get(key);
    if (shape === undefined) {
      const classes = this.index.classes.length;
      shape = {
        seen: touched.length,
        reasons: new Uint8Array(this.index.ids.length),
        classCounts: new Int32Array(classes * ORDER.length),
        classFit: new Int32Array(classes),
        never: new Uint8Array(classes),
        counts: new Int32Array(ORDER.length),
        fit: 0,
        version: 0,
        matching: new WeakMap(),
      };
      for (const c of this.index.classes) this.classCount(shape, c, r, locality);
      this.cache.set(key, shape);
      return shape;
    }
    const last = this.index.lastTouch;
    for (; shape.seen < touched.length; shape.seen++) {
      const h = touched[shape.seen]!;
      // a host touched again later is refreshed at its latest entry
      if (last[h] !== shape.seen) continue;
      const c = this.index.cls[h]!;
      if (shape.never[c] === 1) continue;
      const fresh = freeCode(this.index, h, r, locality);
      const was = shape.reasons[h]!;
      if (fresh === was) continue;
      recount(shape, c, h, was, -1);
      recount(shape, c, h, fresh, 1);
    }
    return shape;
  }

  // one class's hosts counted into a new shape's counts
  private classCount(shape: ShapeCounts, c: HostClass, r: MemberResources, locality: boolean): void {
    const never = classReason(c, r, locality);
    if (never !== null) {
      // the whole class, whatever is in use on it: no per-host scan, nothing to refresh later
      shape.never[c.index] = 1;
      const i = ORDER.indexOf(never);
      shape.classCounts[c.index * ORDER.length + i] = c.hosts.length;
      shape.counts[i] = shape.counts[i]! + c.hosts.length;
    } else {
      for (const h of c.hosts) recount(shape, c.index, h, freeCode(this.index, h, r, locality), 1);
    }
  }
}

// A shape's counts summed over the classes that pass a select, made again only when counts changed.
function matchingSums(shape: ShapeCounts, matching: readonly HostClass[]): MatchingSums {
  const kept = shape.matching.get(matching);
  if (kept !== undefined && kept.version === shape.version) return kept;
  const sums: MatchingSums = { version: shape.version, counts: new Int32Array(ORDER.length), fit: 0, eligible: 0 };
  for (const c of matching) {
    sums.eligible += c.hosts.length;
    sums.fit += shape.classFit[c.index]!;
    const base = c.index * ORDER.length;
    for (let i = 0; i < ORDER.length; i++) sums.counts[i] = sums.counts[i]! + shape.classCounts[base + i]!;
  }
  shape.matching.set(matching, sums);
  return sums;
}

// Host `h`'s reason code added to (or taken from) its class's (`c`) counts and the shape's sums.
function recount(shape: ShapeCounts, c: number, h: number, code: number, delta: 1 | -1): void {
  shape.version++;
  if (delta === 1) shape.reasons[h] = code;
  if (code === FITS) {
    shape.classFit[c] = shape.classFit[c]! + delta;
    shape.fit += delta;
  } else {
    const i = c * ORDER.length + code - 1;
    shape.classCounts[i] = shape.classCounts[i]! + delta;
    shape.counts[code - 1] = shape.counts[code - 1]! + delta;
  }
}
