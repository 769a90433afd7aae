import type { AllocationResources } from '../events.ts';
import type { QueueResources, QueueSpec } from '../contract/types.ts';
import { decayedRate } from '../queues/decayedUse.ts';
import { QueuePaths } from '../queues/queueTree.ts';
import type { QueueTable } from '../queues/queueTree.ts';
import { QUEUE_RESOURCES, addAllocation, subtreeUsage } from '../queues/queueUsage.ts';
import type { Resources } from '../resources.ts';
import type { JobRequest, JobSpec } from '../contract/types.ts';
import type { State } from '../state.ts';

/** What a gang asks of its queues: its members' CPU, memory and GPUs, summed (one request: `activeRequest` for a running gang). */
export function gangRequest(spec: Pick<JobRequest, 'roles'>): AllocationResources {
  const out = { cpu: 0, memoryMb: 0, gpus: 0 };
  for (const r of spec.roles) {
    out.cpu += r.resources.cpu * r.count;
    out.memoryMb += r.resources.memoryMb * r.count;
    out.gpus += r.resources.gpus * r.count;
  }
  return out;
}

/** A queue's `max` a gang would pass, for the `quota` reason. */
export interface QuotaIssue {
  queue: string;
  resource: (typeof QUEUE_RESOURCES)[number];
  used: number;
  max: number;
  request: number;
}

/**
 * A session's view of the queue tree (DESIGN.md §12): each queue's use (its children's included),
 * kept up to date as the session commits and preempts, and the rules read from it: admission
 * against `max` on the whole path, guarantees, borrowing and the weighted dominant shares that
 * order sibling queues. Queue names are the effective ones (`effectiveQueue`).
 */
export class QueueLedger {
  readonly queues: QueueTable;
  private readonly use: Map<string, AllocationResources>;
  private readonly paths: QueuePaths;
  /** Child queue names by parent ('' for the roots), sorted. */
  readonly children = new Map<string, string[]>();

  // with a fair-share half-life: each queue's decayed use (its children's included), which orders siblings instead of `use`
  private readonly fair: Map<string, AllocationResources> | null = null;

  constructor(state: State, private readonly capacity: Resources, at: number) {
    this.queues = state.queues ?? {};
    this.paths = new QueuePaths(this.queues);
    this.use = subtreeUsage(state, this.paths);
    const halfLife = state.policy?.fairShareHalfLifeMs;
    if (halfLife !== undefined && state.decayed !== undefined) {
      const fair = new Map<string, AllocationResources>();
      for (const name of this.use.keys()) fair.set(name, { cpu: 0, memoryMb: 0, gpus: 0 });
      const names = new Set([...Object.keys(state.decayed), ...Object.keys(state.usage.queues)]);
      for (const name of [...names].sort()) {
        const rate = decayedRate(state.decayed[name], state.usage.queues[name], at, halfLife);
        for (const q of this.paths.of(name)) addAllocation(fair.get(q)!, rate);
      }
      this.fair = fair;
    }
    for (const name of this.use.keys()) {
      const parent = this.queues[name]?.parent ?? '';
      const list = this.children.get(parent);
      if (list === undefined) this.children.set(parent, [name]);
      else list.push(name);
    }
    for (const list of this.children.values()) list.sort();
  }

  /** The queue a job is scheduled in. */
  leafOf(spec: JobSpec): string {
    return this.paths.of(spec.identity.queue)[0]!;
  }

  /** A leaf and its ancestors, the leaf first. */
  path(leaf: string): readonly string[] {
    return this.paths.of(leaf);
  }

  /** What a queue (and its children) uses now. */
  used(queue: string): AllocationResources {
    return this.use.get(queue)!;
  }

  /** Adds (sign 1) or takes away (-1) a gang's use in its leaf and every ancestor. */
  add(leaf: string, amount: AllocationResources, sign: 1 | -1): void {
    for (const q of this.path(leaf)) {
      addAllocation(this.use.get(q)!, amount, sign);
      // what this session commits counts in the decayed order too, at its full rate
      if (this.fair !== null) addAllocation(this.fair.get(q)!, amount, sign);
    }
  }

  /** The first queue on the path (leaf first) whose `max` the request would pass, or null: admission. */
  quotaIssue(leaf: string, request: AllocationResources): QuotaIssue | null {
    for (const q of this.path(leaf)) {
      const max = this.queues[q]?.max;
      if (max === undefined) continue;
      const u = this.use.get(q)!;
      for (const r of QUEUE_RESOURCES) {
        const m = max[r];
        if (m !== undefined && u[r] + request[r] > m) return { queue: q, resource: r, used: u[r], max: m, request: request[r] };
      }
    }
    return null;
  }

  /**
   * Whether the request keeps its leaf within its guarantee, and every ancestor within theirs, on
   * the resources each names: the condition for reclaim. A leaf that names no guarantee is
   * guaranteed nothing; an ancestor that names none constrains nothing.
   */
  withinGuarantee(leaf: string, request: AllocationResources): boolean {
    const path = this.path(leaf);
    if (!names(this.queues[path[0]!]?.guaranteed)) return false;
    for (const q of path) {
      const g = this.queues[q]?.guaranteed;
      if (g === undefined) continue;
      const u = this.use.get(q)!;
      for (const r of QUEUE_RESOURCES) if (g[r] !== undefined && u[r] + request[r] > g[r]) return false;
    }
    return true;
  }

  /** Whether a queue uses more than it is guaranteed (anything at all, when it names no guarantee). */
  borrowing(queue: string): boolean {
    const g = this.queues[queue]?.guaranteed ?? {};
    const u = this.use.get(queue)!;
    if (!names(g)) return u.cpu > 0 || u.memoryMb > 0 || u.gpus > 0;
    return QUEUE_RESOURCES.some((r) => g[r] !== undefined && u[r] > g[r]);
  }

  /**
   * How far a queue is over its guarantee: the largest (use − guarantee) over the resources it
   * guarantees (all of them, at 0, when it names none), each as a share of the cluster's capacity.
   */
  over(queue: string): number {
    const g = this.queues[queue]?.guaranteed ?? {};
    const all = !names(g);
    const u = this.use.get(queue)!;
    let most = Number.NEGATIVE_INFINITY;
    for (const r of QUEUE_RESOURCES) {
      if (!all && g[r] === undefined) continue;
      const cap = this.capacity[r];
      const share = cap > 0 ? (u[r] - (g[r] ?? 0)) / cap : 0;
      if (share > most) most = share;
    }
    return most;
  }

  /**
   * Whether taking `amount` and `taken` (when given) away from a queue would leave it below its
   * guarantee on a resource it names and they hold.
   */
  wouldFallBelow(queue: string, amount: AllocationResources, taken?: AllocationResources): boolean {
    const g = this.queues[queue]?.guaranteed;
    if (g === undefined) return false;
    const u = this.use.get(queue)!;
    for (const r of QUEUE_RESOURCES) {
      if (g[r] === undefined) continue;
      const all = taken === undefined ? amount[r] : amount[r] + taken[r];
      if (all > 0 && u[r] - all < g[r]) return true;
    }
    return false;
  }

  /**
   * A queue's weighted dominant share, which orders siblings (lower first): the largest use over
   * guarantee (over the cluster's capacity where the guarantee is 0), divided by its weight; with a
   * fair-share half-life, the decayed use instead of the use now.
   */
  share(queue: string): number {
    const spec: QueueSpec | undefined = this.queues[queue];
    const g: QueueResources = spec?.guaranteed ?? {};
    const u = (this.fair ?? this.use).get(queue)!;
    let most = 0;
    for (const r of QUEUE_RESOURCES) {
      const denominator = (g[r] ?? 0) > 0 ? g[r]! : this.capacity[r];
      if (denominator > 0 && u[r] / denominator > most) most = u[r] / denominator;
    }
    return most / (spec?.weight ?? 1);
  }
}

function names(g: QueueResources | undefined): boolean {
  return g !== undefined && (g.cpu !== undefined || g.memoryMb !== undefined || g.gpus !== undefined);
}
