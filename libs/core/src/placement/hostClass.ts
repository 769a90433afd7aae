import type { NodeSpec } from '../contract/types.ts';
import type { BucketDemand } from './bucketDemand.ts';

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
  /** Per level of JOINT_LEVELS: the least key below each tree node among hosts with that share of both CPU and slots free (none without a slot limit, or without CPU or slots). */
  jointLevelKey: Float64Array[];
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

/** A free value of a dimension without a limit (slots of a class without a slot limit). */
export const NO_LIMIT = Number.POSITIVE_INFINITY;

// Binpack weight of a dimension: ⌊2^32 / capacity⌋, so weight × free is the free fraction scaled to
// an integer and sums stay exact doubles (below 2^53 for any capacity under 2^50).
const SCALE = 2 ** 32;

function weight(capacity: number): number {
  return capacity > 0 ? Math.max(1, Math.floor(SCALE / capacity)) : 0;
}

/** A class of one host spec, with no host yet and empty trees (`buildTree` sizes them). */
export function newClass(index: number, spec: NodeSpec): HostClass {
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
    jointLevelKey: [],
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
