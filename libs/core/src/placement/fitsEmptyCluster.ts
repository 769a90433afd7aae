import type { MemberResources } from '../contract/types.ts';
import { allocateGang } from './allocateGang.ts';
import type { GangShape } from './gangShape.ts';
import type { HostClass, HostSource } from './hostIndex.ts';
import { HostIndex } from './hostIndex.ts';
import { topologyGroups } from './topologyDomains.ts';

/**
 * Whether some plan places the gang on the cluster as it is now but with every host empty (the
 * line between `insufficient-resources` and `placement-unsatisfiable`). One role under pack or
 * spread is answered from per-class counts; other gangs run the allocator itself on a small empty
 * copy of the cluster, since hosts of one class are interchangeable when empty and a gang of T
 * members never needs more than T hosts of one class.
 */
export function fitsEmptyCluster(index: HostIndex, shape: GangShape, classes: readonly HostClass[]): boolean {
  const role = shape.roles[0];
  if (role === undefined || classes.length === 0) return false;
  const policy = shape.placement.policy;
  const topology = shape.placement.topology;
  if (shape.roles.length === 1 && policy !== 'same-node') {
    // a required topology fits if one domain would; a preferred one never keeps out what fits without it
    if (topology?.mode === 'required') return topologyGroups(classes, topology.key).domains.some((d) => fitsEmptyClasses(shape, d.classes));
    return fitsEmptyClasses(shape, classes);
  }
  const sources: HostSource[] = [];
  const picked: number[] = [];
  // one empty host of a class is all `same-node` can use; otherwise up to one per member (the copy
  // keeps every class, so its labels and topology domains, and allocateGang keeps the topology)
  const copies = policy === 'same-node' ? 1 : shape.size;
  for (const c of classes) for (const h of c.hosts.slice(0, copies)) picked.push(h);
  picked.sort((a, b) => a - b);
  for (const h of picked) sources.push({ spec: index.specs[h]!, usedCpu: 0, usedMemoryMb: 0, usedSlots: 0, gpusUsed: [] });
  const empty = new HostIndex(sources);
  return allocateGang(empty, '', shape, empty.classes) !== null;
}

// One role under pack or spread, from per-class counts of what an empty host takes.
function fitsEmptyClasses(shape: GangShape, classes: readonly HostClass[]): boolean {
  const role = shape.roles[0]!;
  const policy = shape.placement.policy;
  const perHost = classes.map((c) => ({ members: membersPerEmptyHost(c, role.resources, shape.placement.gpuLocality), hosts: c.hosts.length }));
  // hostsTaking(b): how many empty hosts take a bucket of b members
  const hostsTaking = (b: number): number => perHost.reduce((n, c) => (c.members >= b ? n + c.hosts : n), 0);
  const t = role.count;
  if (policy === 'spread') return hostsTaking(1) >= t;
  const ptile = shape.placement.ptile;
  if (ptile !== undefined) {
    const full = Math.floor(t / ptile);
    const rest = t % ptile;
    return hostsTaking(ptile) >= full && (rest === 0 || hostsTaking(rest) >= full + 1);
  }
  for (let h = 1; h <= t; h++) {
    const q = Math.floor(t / h);
    const larger = t % h;
    if ((larger === 0 || hostsTaking(q + 1) >= larger) && hostsTaking(q) >= h) return true;
  }
  return false;
}

/** How many members of a role one empty host of a class takes (Infinity when nothing limits it). */
export function membersPerEmptyHost(c: HostClass, r: MemberResources, locality: boolean): number {
  let n = Number.POSITIVE_INFINITY;
  if (r.cpu > 0) n = Math.min(n, Math.floor(c.spec.capacity.cpu / r.cpu));
  if (r.memoryMb > 0) n = Math.min(n, Math.floor(c.spec.capacity.memoryMb / r.memoryMb));
  if (c.slotLimited) n = Math.min(n, c.spec.capacity.slots ?? 0);
  if (r.gpus > 0) {
    const perDomain = new Array<number>(c.domains.length).fill(0);
    let all = 0;
    for (let g = 0; g < c.gpuIds.length; g++) {
      if (c.gpuMem[g]! < r.gpuMemoryMb) continue;
      perDomain[c.gpuDom[g]!]!++;
      all++;
    }
    const usable = locality ? Math.max(0, ...perDomain) : all;
    n = Math.min(n, Math.floor(usable / r.gpus));
  }
  return n;
}
