import type { MemberResources } from '../spec/types.ts';
import type { HostClass, HostIndex } from './hostIndex.ts';

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

/** The first reason host `h` cannot take one member of this shape now, or null if it can. */
export function hostReason(index: HostIndex, h: number, r: MemberResources, locality: boolean): HostReason | null {
  if (index.freeCpu[h]! < r.cpu) return 'insufficient-cpu';
  if (index.freeMem[h]! < r.memoryMb) return 'insufficient-memory';
  if (index.freeSlots[h]! < 1) return 'insufficient-slots';
  if (r.gpus === 0) return null;
  if (index.freeGpu[h]! < r.gpus) return 'insufficient-gpu';
  const c = index.classes[index.cls[h]!]!;
  const gpuBase = index.gpuBase[h]!;
  let qualified = 0;
  const perDomain = new Array<number>(c.domains.length).fill(0);
  for (let g = 0; g < c.gpuIds.length; g++) {
    if (index.gpuFree[gpuBase + g] !== 1 || c.gpuMem[g]! < r.gpuMemoryMb) continue;
    qualified++;
    perDomain[c.gpuDom[g]!]!++;
  }
  if (qualified < r.gpus) return 'insufficient-gpu-memory';
  if (locality && Math.max(...perDomain) < r.gpus) return 'gpu-locality';
  return null;
}

interface ClassCount {
  version: number;
  counts: Map<HostReason, number>;
  fit: number;
}

/**
 * Counts hosts per reason for one member, per class, cached until a commit touches the class (free
 * capacity changes only then, since a failed attempt restores the index exactly).
 */
export class HostCounter {
  private readonly cache = new Map<string, ClassCount>();

  constructor(private readonly index: HostIndex, private readonly offline: OfflineHosts) {}

  /** Host counts for one member of `r` against the hosts that pass select (`matching`). */
  count(matching: readonly HostClass[], r: MemberResources, locality: boolean): HostCounts {
    const totals = new Map<HostReason, number>();
    const add = (reason: HostReason, n: number): void => {
      if (n > 0) totals.set(reason, (totals.get(reason) ?? 0) + n);
    };
    add('node-lost', this.offline.lost);
    add('drained', this.offline.drained);
    const matches = new Set(matching.map((c) => c.index));
    let fit = 0;
    let eligible = 0;
    for (const c of this.index.classes) {
      if (!matches.has(c.index)) {
        add('select-mismatch', c.hosts.length);
        continue;
      }
      eligible += c.hosts.length;
      const counted = this.classCount(c, r, locality);
      fit += counted.fit;
      for (const [reason, n] of counted.counts) add(reason, n);
    }
    const hosts: Record<string, number> = {};
    for (const reason of ORDER) {
      const n = totals.get(reason);
      if (n !== undefined) hosts[reason] = n;
    }
    return { hosts, fit, eligible, total: this.index.ids.length + this.offline.lost + this.offline.drained };
  }

  private classCount(c: HostClass, r: MemberResources, locality: boolean): ClassCount {
    const key = `${c.index}/${r.cpu}/${r.memoryMb}/${r.gpus}/${r.gpus > 0 ? r.gpuMemoryMb : 0}/${locality && r.gpus > 0}`;
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.version === c.version) return cached;
    const counts = new Map<HostReason, number>();
    let fit = 0;
    for (const h of c.hosts) {
      const reason = hostReason(this.index, h, r, locality);
      if (reason === null) fit++;
      else counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
    const fresh = { version: c.version, counts, fit };
    this.cache.set(key, fresh);
    return fresh;
  }
}
