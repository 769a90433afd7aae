import type { RoleShape } from './gangShape.ts';

/** GPU devices one role asks of a host in one bucket: how many, and the least memory of each. */
export interface GpuPart {
  count: number;
  gpuMemoryMb: number;
}

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

/** What `n` members of a role ask of one host, as one bucket. */
export function bucketDemand(role: RoleShape, n: number, locality: boolean): BucketDemand {
  const r = role.resources;
  const gpus = r.gpus * n;
  return {
    cpu: r.cpu * n,
    memoryMb: r.memoryMb * n,
    slots: n,
    gpus,
    parts: [{ count: gpus, gpuMemoryMb: gpus > 0 ? r.gpuMemoryMb : 0 }],
    locality: locality && gpus > 0,
  };
}
