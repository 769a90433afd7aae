import type { JobSpec, QueueSpec } from '../contract/types.ts';
import type { RejectionReason } from '../events.ts';
import { MAX_QUEUE_DEPTH, MAX_QUEUES } from '../contract/queueSpecSchema.ts';

// The queue tree (DESIGN.md §12) as the state holds it: queue specs by name, each naming its
// parent. These read it; they never change it.

/** The queue every job is in while no queue is defined, and every job accepted before one was. */
export const DEFAULT_QUEUE = 'default';

/** Queue specs by name (a prototype-less record). */
export type QueueTable = Readonly<Record<string, QueueSpec>>;

/** The queue and its ancestors, the queue first; empty for a name the table does not hold. */
export function queuePath(queues: QueueTable, name: string): QueueSpec[] {
  const path: QueueSpec[] = [];
  for (let q = queues[name]; q !== undefined && path.length <= MAX_QUEUE_DEPTH; q = q.parent === undefined ? undefined : queues[q.parent]) path.push(q);
  return path;
}

/** Whether a defined queue has no child. */
export function isLeafQueue(queues: QueueTable, name: string): boolean {
  if (queues[name] === undefined) return false;
  for (const q of Object.values(queues)) if (q.parent === name) return false;
  return true;
}

/**
 * Where a job naming `name` is scheduled: that queue when it is a defined leaf, else the implicit
 * `default` queue (a job accepted before the queues were defined, or before its queue got children).
 */
export function effectiveQueue(queues: QueueTable, name: string): string {
  return queues[name] !== undefined && isLeafQueue(queues, name) ? name : DEFAULT_QUEUE;
}

/**
 * Where jobs naming a queue are scheduled, as the names of that queue (`effectiveQueue`) and its
 * ancestors, leaf first; memoised per name for one reading of a table (a state's queues).
 */
export class QueuePaths {
  private readonly paths = new Map<string, readonly string[]>();

  constructor(private readonly queues: QueueTable) {}

  /** The path of the queue jobs naming `name` are scheduled in, leaf first. */
  of(name: string): readonly string[] {
    let path = this.paths.get(name);
    if (path === undefined) {
      const specs = queuePath(this.queues, effectiveQueue(this.queues, name));
      path = specs.length === 0 ? [DEFAULT_QUEUE] : specs.map((q) => q.name);
      this.paths.set(name, path);
    }
    return path;
  }
}

/**
 * Why setting `spec` would not leave a tree, as ingest refuses it, or null: its parent must exist
 * (`unknown`), be no descendant of it nor itself (a cycle), keep the tree within MAX_QUEUE_DEPTH
 * levels, and the queues within MAX_QUEUES (`invalid`).
 */
export function queueSetIssue(queues: QueueTable, spec: QueueSpec): RejectionReason | null {
  const invalid = (path: string, message: string): RejectionReason => ({ category: 'invalid', path, message });
  if (queues[spec.name] === undefined && Object.keys(queues).length >= MAX_QUEUES) return invalid('name', `name: at most ${MAX_QUEUES} queues may be defined`);
  if (spec.parent !== undefined) {
    if (spec.parent === spec.name) return invalid('parent', `parent: queue ${spec.name} cannot be its own parent`);
    if (queues[spec.parent] === undefined) return { category: 'unknown', path: 'parent', message: `parent: unknown queue ${spec.parent}` };
    if (queuePath(queues, spec.parent).some((q) => q.name === spec.name)) return invalid('parent', `parent: queue ${spec.parent} is below ${spec.name}: that would make a cycle`);
  }
  // the deepest leaf under `spec`, once set, must stay within MAX_QUEUE_DEPTH levels
  const next: Record<string, QueueSpec> = { ...queues, [spec.name]: spec };
  const levels = queuePath(next, spec.name).length + heightBelow(next, spec.name, 0);
  return levels > MAX_QUEUE_DEPTH ? invalid('parent', `parent: the queue tree would be ${levels} levels deep; at most ${MAX_QUEUE_DEPTH}`) : null;
}

function heightBelow(queues: QueueTable, name: string, depth: number): number {
  if (depth > MAX_QUEUE_DEPTH) return depth;
  let h = 0;
  for (const q of Object.values(queues)) if (q.parent === name) h = Math.max(h, 1 + heightBelow(queues, q.name, depth + 1));
  return h;
}

/** The runtime limits a queue puts on its jobs: the smallest maximum on its path, and the nearest default. */
export function queueRuntimeLimits(queues: QueueTable, name: string): { max: number | undefined; default: number | undefined } {
  let max: number | undefined;
  let def: number | undefined;
  for (const q of queuePath(queues, name)) {
    if (q.maxRuntimeLimitMs !== undefined) max = max === undefined ? q.maxRuntimeLimitMs : Math.min(max, q.maxRuntimeLimitMs);
    if (def === undefined) def = q.defaultRuntimeLimitMs;
  }
  return { max, default: def };
}

/**
 * A job in the queue tree (DESIGN.md §12), as the ingest admits it once queues are defined: it
 * names a defined leaf queue, its runtime limit is within the smallest maximum on that queue's path,
 * and a job with none takes the queue's default (or that maximum), written into the returned spec.
 * The API's submission check (services/scheduler) asks the same, so both answer alike.
 */
export function jobInQueue(queues: QueueTable, spec: JobSpec): { ok: true; value: JobSpec } | { ok: false; error: RejectionReason } {
  const name = spec.identity.queue;
  if (queues[name] === undefined) return { ok: false, error: { category: 'unknown', path: 'identity.queue', message: `identity.queue: unknown queue ${name}` } };
  if (!isLeafQueue(queues, name)) return { ok: false, error: { category: 'invalid', path: 'identity.queue', message: `identity.queue: queue ${name} has child queues; jobs go to a leaf queue` } };
  const { max, default: def } = queueRuntimeLimits(queues, name);
  if (spec.runtimeLimitMs !== undefined) {
    if (max !== undefined && spec.runtimeLimitMs > max) {
      return { ok: false, error: { category: 'invalid', path: 'runtimeLimitMs', message: `runtimeLimitMs: ${spec.runtimeLimitMs} is above queue ${name}'s maximum of ${max}` } };
    }
    return { ok: true, value: spec };
  }
  // the queue's default (within the maximum), else the maximum, else none
  const limit = def === undefined ? max : max === undefined ? def : Math.min(def, max);
  return { ok: true, value: limit === undefined ? spec : { ...spec, runtimeLimitMs: limit } };
}
