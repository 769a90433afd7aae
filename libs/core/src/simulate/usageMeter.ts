import type { Allocation, AllocationReleased, AllocationResources, GangCommitted, GangResized } from '../events.ts';
import type { Resources } from '../resources.ts';
import { addResources, zeroResources } from '../resources.ts';

/** Allocated resource-time over capacity-time per resource, 0..1; null where the capacity-time is 0 (no GPUs, no slot limits). */
export type Utilisation = Record<keyof Resources, number | null>;

const KEYS = ['cpu', 'memoryMb', 'gpus', 'slots'] as const;

/**
 * Integrates what a workload run holds over time: allocated resources (from commits, elastic resizes and releases;
 * slots only on nodes with a slot limit, as the state counts capacity) and the capacity of up nodes,
 * each constant between instants.
 */
export class UsageMeter {
  private readonly allocated = zeroResources();
  private readonly allocatedTime = zeroResources();
  private readonly capacityTime = zeroResources();
  /** What each gang holds now, so that a resize's whole allocation can replace it. */
  private readonly jobs = new Map<string, Resources>();
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
    const held = zeroResources();
    for (const a of event.allocations) this.hold(held, a.node, a.resources, a.members.length, 1);
    this.jobs.set(event.jobId, held);
    addResources(this.allocated, held, 1);
  }

  /**
   * An elastic gang was resized (DESIGN.md §13): it holds its whole allocation after from now. A
   * shrink's members were given back by their releases already; a growth adds what it bound.
   */
  resize(event: GangResized): void {
    const after = this.sum(event.allocations);
    const before = this.jobs.get(event.jobId) ?? zeroResources();
    addResources(this.allocated, before, -1);
    addResources(this.allocated, after, 1);
    this.jobs.set(event.jobId, after);
  }

  /** Part of an allocation was given back. */
  release(event: AllocationReleased): void {
    const held = zeroResources();
    this.hold(held, event.node, event.resources, event.members.length, 1);
    addResources(this.allocated, held, -1);
    const job = this.jobs.get(event.jobId);
    if (job !== undefined) addResources(job, held, -1);
  }

  /** What allocations hold, slots counted on slot-limited nodes only. */
  private sum(allocations: readonly Allocation[]): Resources {
    const held = zeroResources();
    for (const a of allocations) this.hold(held, a.node, a.resources, a.members.length, 1);
    return held;
  }

  /** Adds (factor 1) or takes (-1) what `members` members hold on `node` to `into`. */
  private hold(into: Resources, node: string, resources: AllocationResources, members: number, factor: 1 | -1): void {
    addResources(into, { ...resources, slots: this.slotLimited(node) ? members : 0 }, factor);
  }

  /** Utilisation per resource so far, rounded to four decimals. */
  utilisation(): Utilisation {
    const out = {} as Utilisation;
    for (const k of KEYS) out[k] = this.capacityTime[k] === 0 ? null : Math.round((this.allocatedTime[k] / this.capacityTime[k]) * 10_000) / 10_000;
    return out;
  }
}
