import type { AllocationReleased, AllocationResources, GangCommitted } from '../events.ts';
import type { Resources } from '../resources.ts';
import { addResources, zeroResources } from '../resources.ts';

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
    addResources(this.allocatedTime, this.allocated, dt);
    addResources(this.capacityTime, capacity, dt);
    this.last = at;
  }

  /** A gang committed: it holds its allocations from now. */
  commit(event: GangCommitted): void {
    for (const a of event.allocations) this.hold(a.node, a.resources, a.members.length, 1);
  }

  /** Part of an allocation was given back. */
  release(event: AllocationReleased): void {
    this.hold(event.node, event.resources, event.members.length, -1);
  }

  /** Adds (factor 1) or gives back (-1) what `members` members hold on `node`. */
  private hold(node: string, resources: AllocationResources, members: number, factor: 1 | -1): void {
    addResources(this.allocated, { ...resources, slots: this.slotLimited(node) ? members : 0 }, factor);
  }

  /** Utilisation per resource so far, rounded to four decimals. */
  utilisation(): Utilisation {
    const out = {} as Utilisation;
    for (const k of KEYS) out[k] = this.capacityTime[k] === 0 ? null : Math.round((this.allocatedTime[k] / this.capacityTime[k]) * 10_000) / 10_000;
    return out;
  }
}
