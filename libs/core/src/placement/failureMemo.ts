import type { MemberResources } from '../contract/types.ts';
import type { BucketDemand } from './bucketDemand.ts';
import type { HostClass } from './hostClass.ts';

// The session's memo of failed demands, per host class (`HostClass.negatives`): a demand no host
// of a class took this session, so that any demand dominating it is known to fail there too.

/**
 * How a search uses the session's memo of infeasible demands: `on` reads and records it; `read`
 * only reads it (a search that passes hosts over, to spare a reservation or a host without a
 * rendezvous port: what the memo says still holds, but what fails then says nothing about the
 * cluster); `off` neither (a plan for a later time or with gangs stopped, when more is free than now).
 */
export type MemoMode = 'on' | 'read' | 'off';

/** Failed demands a class remembers (the oldest forgotten first). */
const NEGATIVE_MEMO = 8;

/**
 * Whether a demand is known to fit no host of the class: more than an empty host of the class
 * offers, or it dominates a failure recorded this session (not looked at when `memo` is off).
 */
export function knownInfeasible(c: HostClass, d: BucketDemand, memo: MemoMode): boolean {
  const cap = c.spec.capacity;
  if (d.cpu > cap.cpu || d.memoryMb > cap.memoryMb || (c.slotLimited && d.slots > (cap.slots ?? 0))) return true;
  if (d.gpus > 0 && !devicesCanEverFit(c, d)) return true;
  if (memo === 'off') return false;
  for (const f of c.negatives) if (dominates(d, f)) return true;
  return false;
}

/**
 * Records that no host of the class can take a demand. Valid for the rest of the session
 * because free capacity only shrinks within a session (commits debit, failed attempts restore).
 * Only when `memo` is on.
 */
export function recordInfeasible(c: HostClass, d: BucketDemand, memo: MemoMode): void {
  if (memo !== 'on' || knownInfeasible(c, d, memo)) return;
  const kept = c.negatives.filter((f) => !dominates(f, d));
  if (kept.length >= NEGATIVE_MEMO) kept.shift();
  kept.push(d);
  c.negatives = kept;
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

/** The fewest members of `r` whose bucket dominates `f` (Infinity: none does), as `dominates` judges. */
export function leastDominating(f: BucketDemand, r: MemberResources, locality: boolean): number {
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
