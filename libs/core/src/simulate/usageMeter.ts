import type { AllocationReleased, GangCommitted } from '../events.ts';
import type { Resources } from '../resources.ts';
import { zeroResources } from '../resources.ts';

/** Allocated resource-time over capacity-time per resource, 0..1; null where the capacity-time is 0 (no GPUs, no slot limits). */
export type Utilisation = Record<keyof Resources, number | null>;

const KEYS = ['cpu', 'memoryMb', 'gpus', 'slots'] as const;

/**
 * Integrates what a workload run holds over time: allocated resources (from commits and releases;
 * slots only on nodes with a slot limit, as the state counts capacity) and the capacity of up nodes,
 * each constant between instants.
 */
export class UsageMeter {
  private readonly allocated = zeroResources();
  private readonly allocatedTime = zeroResources();
  private readonly capacityTime = zeroResources();
  private last = 0;

  constructor(private readonly slotLimited: (nodeId: string) => boolean) {}

  /** Time passes from the last instant to `at` with this allocation and `capacity`. */
  advance(at: number, capacity: Resources): void {
    const dt = at - this.last;
    if (dt <= 0) return;
    for (const k of KEYS) {
      this.allocatedTime[k] += this.allocated[k] * dt;
      this.capacityTime[k] += capacity[k] * dt;
    }
    this.last = at;
  }

  /** A gang committed: it holds its allocations from now. */
  commit(event: GangCommitted): void {
    for (const a of event.allocations) {
      this.allocated.cpu += a.resources.cpu;
      this.allocated.memoryMb += a.resources.memoryMb;
      this.allocated.gpus += a.resources.gpus;
      if (this.slotLimited(a.node)) this.allocated.slots += a.members.length;
    }
  }

  /** Part of an allocation was given back. */
  release(event: AllocationReleased): void {
    this.allocated.cpu -= event.resources.cpu;
    this.allocated.memoryMb -= event.resources.memoryMb;
    this.allocated.gpus -= event.resources.gpus;
    if (this.slotLimited(event.node)) this.allocated.slots -= event.members.length;
  }

  /** Utilisation per resource so far, rounded to four decimals. */
  utilisation(): Utilisation {
    const out = {} as Utilisation;
    for (const k of KEYS) out[k] = this.capacityTime[k] === 0 ? null : Math.round((this.allocatedTime[k] / this.capacityTime[k]) * 10_000) / 10_000;
    return out;
  }
}
