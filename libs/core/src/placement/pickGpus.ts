import type { GpuPart } from './bucketDemand.ts';
import type { HostClass } from './hostClass.ts';

/** What choosing devices reads of the hosts (a `HostIndex`): each host's class and its free devices, per device and per NVLink domain. */
export interface HostDevices {
  readonly classes: readonly HostClass[];
  readonly cls: Int32Array;
  readonly freeGpu: Int32Array;
  /** Per host, its devices' free flags (1 = free) start here in `gpuFree`. */
  readonly gpuBase: Int32Array;
  readonly gpuFree: Uint8Array;
  /** Per host, its domains' free device counts start here in `domFree`. */
  readonly domBase: Int32Array;
  readonly domFree: Int32Array;
}

/**
 * Chooses GPU devices on host `h` for every part (device indices per part, ascending id), or null
 * when they do not fit. Each part takes the lowest free device ids with enough memory; parts with
 * the strictest memory need choose first, so a lax part never takes a device a strict one needs.
 * With `locality` every device comes from one NVLink domain (`pin`, when the gang already holds
 * GPUs of a domain on this host): the domain with the fewest free devices that still fits, ties by
 * domain number, so whole domains stay free for larger local requests; but a domain that also
 * has room for `reserve` more devices (what later roles of the gang may add on this host, which
 * must then come from the same domain) goes before one that does not.
 */
export function pickGpus(index: HostDevices, h: number, parts: readonly GpuPart[], locality: boolean, pin: number, reserve = 0): number[][] | null {
  let total = 0;
  for (const p of parts) total += p.count;
  if (total === 0) return parts.map(() => []);
  if (index.freeGpu[h]! < total) return null;
  if (!locality) return pickIn(index, h, parts, -1);
  const c = index.classes[index.cls[h]!]!;
  const base = index.domBase[h]!;
  let best: number[][] | null = null;
  let bestRank = Number.POSITIVE_INFINITY;
  for (let d = 0; d < c.domains.length; d++) {
    if (pin >= 0 && d !== pin) continue;
    const free = index.domFree[base + d]!;
    // domains with room for the reserve rank before all others, then the tightest first
    const rank = (free >= total + reserve ? 0 : c.gpuIds.length + 1) + free;
    if (free < total || rank >= bestRank) continue;
    const picked = pickIn(index, h, parts, d);
    if (picked !== null) {
      best = picked;
      bestRank = rank;
    }
  }
  return best;
}

/** The compact NVLink domain index of a device index on host `h`'s class. */
export function deviceDomain(index: HostDevices, h: number, device: number): number {
  return index.classes[index.cls[h]!]!.gpuDom[device]!;
}

// Greedy, strictest memory need first, within one domain (or anywhere when domain < 0).
function pickIn(index: HostDevices, h: number, parts: readonly GpuPart[], domain: number): number[][] | null {
  const c = index.classes[index.cls[h]!]!;
  const base = index.gpuBase[h]!;
  const order = parts.map((_, i) => i).sort((a, b) => parts[b]!.gpuMemoryMb - parts[a]!.gpuMemoryMb || a - b);
  const taken = parts.length > 1 ? new Set<number>() : null;
  const out: number[][] = parts.map(() => []);
  for (const i of order) {
    const part = parts[i]!;
    const list = out[i]!;
    for (let g = 0; g < c.gpuIds.length && list.length < part.count; g++) {
      if (index.gpuFree[base + g] !== 1 || c.gpuMem[g]! < part.gpuMemoryMb) continue;
      if (domain >= 0 && c.gpuDom[g] !== domain) continue;
      if (taken !== null) {
        if (taken.has(g)) continue;
        taken.add(g);
      }
      list.push(g);
    }
    if (list.length < part.count) return null;
  }
  return out;
}
