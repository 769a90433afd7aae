import type { TopologySpec } from '../contract/types.ts';
import type { GangShape } from './gangShape.ts';
import { HostCounter } from './hostCounter.ts';
import type { HostClass } from './hostClass.ts';
import type { HostIndex } from './hostIndex.ts';

/** The hosts of one topology domain: every candidate class whose label `key` has this value. */
export interface TopologyDomain {
  /** The label's value as text (a number label 1 and a string label "1" are one domain, as in select). */
  value: string;
  /** Its classes, in index order (a class has one value: labels are part of the class key). */
  classes: HostClass[];
  /** Hosts in those classes. */
  hosts: number;
}

/** Candidate classes split by a label: the domains in their order, and the classes without the label. */
export interface TopologyGroups {
  domains: TopologyDomain[];
  unlabelled: HostClass[];
}

/** The value of label `key` on a class's hosts as text, or null when they do not carry it. */
export function labelValue(c: HostClass, key: string): string | null {
  const labels = c.spec.labels;
  // own properties only: a key such as "toString" must not read Object.prototype
  return Object.hasOwn(labels, key) ? String(labels[key]) : null;
}

const NUMERIC = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * The order of domains, a total order on label values as text: values that are numbers first, by
 * number (rack 2 before rack 10), ties by text; then every other value by code units.
 */
export function compareDomainValues(a: string, b: string): number {
  const na = NUMERIC.test(a);
  const nb = NUMERIC.test(b);
  if (na !== nb) return na ? -1 : 1;
  if (na) {
    const d = Number(a) - Number(b);
    if (d !== 0) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The candidate classes (of `index`) grouped by the value of label `key`, domains in
 * `compareDomainValues` order; made once per list of classes and key (the index keeps them: a
 * session keeps one list per select, and an index its classes for its lifetime), not once per attempt.
 */
export function topologyGroups(index: HostIndex, classes: readonly HostClass[], key: string): TopologyGroups {
  let byKey = index.topologyGroups.get(classes);
  if (byKey === undefined) {
    byKey = new Map();
    index.topologyGroups.set(classes, byKey);
  }
  let groups = byKey.get(key);
  if (groups !== undefined) return groups;
  const byValue = new Map<string, TopologyDomain>();
  const unlabelled: HostClass[] = [];
  for (const c of classes) {
    const value = labelValue(c, key);
    if (value === null) {
      unlabelled.push(c);
      continue;
    }
    let d = byValue.get(value);
    if (d === undefined) {
      d = { value, classes: [], hosts: 0 };
      byValue.set(value, d);
    }
    d.classes.push(c);
    d.hosts += c.hosts.length;
  }
  // sorted by value: iteration order never depends on the order classes were met in
  const domains = [...byValue.values()].sort((x, y) => compareDomainValues(x.value, y.value));
  groups = { domains, unlabelled };
  byKey.set(key, groups);
  return groups;
}

/** What a whole gang asks for, summed over its members (slots: one per member). */
export interface GangTotals {
  cpu: number;
  memoryMb: number;
  slots: number;
  gpus: number;
}

/** The gang's total demand. */
export function gangTotals(shape: GangShape): GangTotals {
  const t: GangTotals = { cpu: 0, memoryMb: 0, slots: shape.size, gpus: 0 };
  for (const r of shape.roles) {
    t.cpu += r.resources.cpu * r.count;
    t.memoryMb += r.resources.memoryMb * r.count;
    t.gpus += r.resources.gpus * r.count;
  }
  return t;
}

/**
 * The share of the gang that free capacity summed over some classes could hold (the least, over
 * resources, of free / demand; Infinity when it asks for nothing): below 1, no placement exists there.
 */
export function domainShare(sums: Float64Array, classes: readonly HostClass[], need: GangTotals): number {
  let cpu = 0;
  let mem = 0;
  let slots = 0;
  let gpus = 0;
  for (const c of classes) {
    const b = 4 * c.index;
    cpu += sums[b]!;
    mem += sums[b + 1]!;
    slots += sums[b + 2]!;
    gpus += sums[b + 3]!;
  }
  return shareOf(cpu, mem, slots, gpus, need);
}

/** `domainShare` of one host's free values. */
export function hostShare(index: HostIndex, h: number, need: GangTotals): number {
  return shareOf(index.freeCpu[h]!, index.freeMem[h]!, index.freeSlots[h]!, index.freeGpu[h]!, need);
}

function shareOf(cpu: number, mem: number, slots: number, gpus: number, need: GangTotals): number {
  let share = Number.POSITIVE_INFINITY;
  if (need.cpu > 0) share = Math.min(share, cpu / need.cpu);
  if (need.memoryMb > 0) share = Math.min(share, mem / need.memoryMb);
  if (need.slots > 0) share = Math.min(share, slots / need.slots);
  if (need.gpus > 0) share = Math.min(share, gpus / need.gpus);
  return share;
}

/** Room in one domain now: its hosts, and how many of them could take one member of the heaviest role. */
export interface DomainRoom {
  value: string;
  /** Hosts of the domain that pass select (up, undrained). */
  hosts: number;
  /** Of those, hosts that could take one member of the heaviest role now. */
  fit: number;
}

/** Room per domain of a required topology, for pend reasons and `muster explain`. */
export interface TopologyRoom {
  key: string;
  /** Every domain among the hosts that pass select, in domain order. */
  domains: DomainRoom[];
  /** Hosts that pass select but do not carry the label (not candidates under `required`). */
  unlabelled: number;
  /** One line naming the domains with the most room first, e.g. `rack r1: 3 of 4 hosts could take a 'task' member; rack r2: 0 of 4`. */
  message: string;
}

/** Domains a message names one by one; the rest are summed up. */
const LISTED = 8;

/**
 * How much room each domain of a job's required topology has now (hosts that could take one member
 * of its heaviest role, as the pend reason's host counts count them), or null when the job has no
 * required topology. `classes` are the classes that pass the job's select; give the session's
 * counter to reuse its counts.
 */
export function topologyRoom(
  index: HostIndex,
  classes: readonly HostClass[],
  shape: GangShape,
  counter: HostCounter = new HostCounter(index, { lost: 0, drained: 0 }),
): TopologyRoom | null {
  const topology = shape.placement.topology;
  if (topology === undefined || topology.mode !== 'required') return null;
  const heaviest = shape.roles[0]!;
  const groups = topologyGroups(index, classes, topology.key);
  const domains = groups.domains.map((d): DomainRoom => ({ value: d.value, hosts: d.hosts, fit: counter.fitIn(d.classes, heaviest.resources, shape.placement.gpuLocality) }));
  const unlabelled = groups.unlabelled.reduce((n, c) => n + c.hosts.length, 0);
  return { key: topology.key, domains, unlabelled, message: roomMessage(topology, heaviest.name, domains, unlabelled) };
}

function roomMessage(topology: TopologySpec, role: string, domains: readonly DomainRoom[], unlabelled: number): string {
  const key = topology.key;
  const without = unlabelled === 0 ? '' : `; ${unlabelled} matching host${unlabelled === 1 ? '' : 's'} without label ${key} (not candidates)`;
  if (domains.length === 0) return `no matching host has label ${key}${without}`;
  // the domains with the most room first (ties in domain order): the ones closest to taking the gang
  const listed = [...domains].sort((a, b) => b.fit - a.fit).slice(0, LISTED);
  const parts = listed.map((d, i) => `${key} ${d.value}: ${d.fit} of ${d.hosts}${i === 0 ? ` hosts could take a '${role}' member` : ''}`);
  const rest = domains.length - listed.length;
  if (rest > 0) {
    const most = Math.max(...domains.filter((d) => !listed.includes(d)).map((d) => d.fit));
    parts.push(`${rest} more ${key} domain${rest === 1 ? '' : 's'} with at most ${most} each`);
  }
  return `${parts.join('; ')}${without}`;
}
