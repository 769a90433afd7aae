import type { MemberResources } from '../contract/types.ts';
import { allocateGang } from './allocateGang.ts';
import type { GangShape } from './gangShape.ts';
import type { HostClass, HostSource } from './hostClass.ts';
import { HostIndex } from './hostIndex.ts';
import { topologyGroups } from './topologyDomains.ts';

/**
 * Whether some plan places the gang on the cluster as it is now but with every host empty (the
 * line between `insufficient-resources` and `placement-unsatisfiable`). One role under pack or
 * spread is answered from per-class counts; other gangs run the allocator itself on a small empty
 * copy of the cluster, since hosts of one kind (capacity and GPUs) are interchangeable when empty
 * and a gang of T members never needs more than T hosts of one kind. A required topology asks
 * this of each domain alone (each kind of domain once); a preferred one is answered as without it.
 */
export function fitsEmptyCluster(index: HostIndex, shape: GangShape, classes: readonly HostClass[]): boolean {
  return index.emptyFits.get(emptyFitKey(index, shape, classes), () => fitsEmpty(index, shape, classes));
}

// What the answer depends on: the classes, and the gang's roles (count and resources, in placement
// order) and placement; not its role names or member numbers.
function emptyFitKey(index: HostIndex, shape: GangShape, classes: readonly HostClass[]): string {
  const p = shape.placement;
  const roles = shape.roles.map((r) => [r.count, r.resources.cpu, r.resources.memoryMb, r.resources.gpus, r.resources.gpuMemoryMb]);
  return JSON.stringify([index.classesKey(classes), roles, p.policy, p.ptile ?? null, p.gpuLocality, p.topology?.key ?? null, p.topology?.mode ?? null]);
}

function fitsEmpty(index: HostIndex, shape: GangShape, classes: readonly HostClass[]): boolean {
  const role = shape.roles[0];
  if (role === undefined || classes.length === 0) return false;
  const policy = shape.placement.policy;
  const topology = shape.placement.topology;
  if (shape.roles.length === 1 && policy !== 'same-node') {
    // a required topology fits if one domain would; a preferred one never keeps out what fits without it
    if (topology?.mode === 'required') return topologyGroups(index, classes, topology.key).domains.some((d) => fitsEmptyClasses(index, shape, d.classes));
    return fitsEmptyClasses(index, shape, classes);
  }
  // one empty host of a class is all `same-node` can use; otherwise up to one per member
  const copies = policy === 'same-node' ? 1 : shape.size;
  const plain = index.memo.withoutTopology(shape);
  // a preferred topology never keeps out what fits without it
  if (topology?.mode !== 'required') return fitsEmptyCopy(index, plain, classes, copies);
  // required: some domain alone must take it; domains made of the same kinds of host (in the same
  // numbers, up to what the gang could use) answer alike, so each kind of domain is tried once
  const tried = new Set<string>();
  for (const d of topologyGroups(index, classes, topology.key).domains) {
    const kinds = emptyKinds(index, d.classes).map((k): [string, number] => [k.key, Math.min(copies, k.hosts)]);
    const signature = JSON.stringify(kinds.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
    if (tried.has(signature)) continue;
    tried.add(signature);
    if (fitsEmptyCopy(index, plain, d.classes, copies)) return true;
  }
  return false;
}

/**
 * Runs the allocator for a gang without topology on an empty copy of some classes: at most
 * `copies` hosts of each kind. Select has already chosen the classes, so the copy keeps no
 * labels: classes that differ only in labels (a rack label makes many) are one class there.
 */
function fitsEmptyCopy(index: HostIndex, shape: GangShape, classes: readonly HostClass[], copies: number): boolean {
  const empty = index.emptyCopies.get(`${index.classesKey(classes)}/${copies}`, () => emptyCopy(index, classes, copies));
  const stmt = allocateGang(empty, '', shape, empty.classes);
  // the copy is kept for other gangs: empty again
  stmt?.discard();
  return stmt !== null;
}

// An index of at most `copies` hosts of each kind of the classes, every one empty and without labels.
function emptyCopy(index: HostIndex, classes: readonly HostClass[], copies: number): HostIndex {
  const taken = new Map<string, number>();
  const picked: number[] = [];
  for (const c of classes) {
    const kind = index.memo.hostClassKey(index.memo.strippedSpec(c.spec));
    let n = taken.get(kind) ?? 0;
    for (let i = 0; i < c.hosts.length && n < copies; i++, n++) picked.push(c.hosts[i]!);
    taken.set(kind, n);
  }
  picked.sort((a, b) => a - b);
  const sources: HostSource[] = picked.map((h) => ({ spec: index.memo.strippedSpec(index.specs[h]!), usedCpu: 0, usedMemoryMb: 0, usedSlots: 0, gpusUsed: [] }));
  return new HostIndex(sources, null, index.memo);
}

/** Hosts of one kind (capacity and GPUs, labels aside) among some classes: its class key without labels, one class standing for them, and their number. */
export interface EmptyKind {
  key: string;
  cls: HostClass;
  hosts: number;
}

// The kinds of host among some classes, in the order first met (made once per list: the index
// keeps them); an empty host takes as many members as any other of its kind, so a rack label that
// splits a kind into hundreds of classes adds nothing to count
function emptyKinds(index: HostIndex, classes: readonly HostClass[]): readonly EmptyKind[] {
  let kinds = index.emptyKinds.get(classes);
  if (kinds === undefined) {
    const byKey = new Map<string, EmptyKind>();
    for (const c of classes) {
      const key = index.memo.hostClassKey(index.memo.strippedSpec(c.spec));
      const kind = byKey.get(key);
      if (kind === undefined) byKey.set(key, { key, cls: c, hosts: c.hosts.length });
      else kind.hosts += c.hosts.length;
    }
    kinds = [...byKey.values()];
    index.emptyKinds.set(classes, kinds);
  }
  return kinds;
}

// One role under pack or spread, from per-kind counts of what an empty host takes.
function fitsEmptyClasses(index: HostIndex, shape: GangShape, classes: readonly HostClass[]): boolean {
  const role = shape.roles[0]!;
  const policy = shape.placement.policy;
  const perHost = emptyKinds(index, classes).map((k) => ({ members: membersPerEmptyHost(k.cls, role.resources, shape.placement.gpuLocality), hosts: k.hosts }));
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
