import type { JobSpec, QueueSpec, SpecIssue } from '../contract/types.ts';
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
 * Why setting `spec` would not leave a tree, or null: its parent must exist, be no descendant of
 * it (a cycle), keep the tree within MAX_QUEUE_DEPTH levels, and the queues within MAX_QUEUES.
 */
export function queueSetIssue(queues: QueueTable, spec: QueueSpec): SpecIssue | null {
  if (queues[spec.name] === undefined && Object.keys(queues).length >= MAX_QUEUES) {
    return { path: 'name', message: `name: at most ${MAX_QUEUES} queues may be defined` };
  }
  if (spec.parent === undefined) return depthIssue(queues, spec);
  if (spec.parent === spec.name) return { path: 'parent', message: `parent: queue ${spec.name} cannot be its own parent` };
  if (queues[spec.parent] === undefined) return { path: 'parent', message: `parent: unknown queue ${spec.parent}` };
  for (let q: QueueSpec | undefined = queues[spec.parent]; q !== undefined; q = q.parent === undefined ? undefined : queues[q.parent]) {
    if (q.name === spec.name) return { path: 'parent', message: `parent: queue ${spec.parent} is below ${spec.name}: that would make a cycle` };
  }
  return depthIssue(queues, spec);
}

// the deepest leaf under `spec`, once set, must stay within MAX_QUEUE_DEPTH levels
function depthIssue(queues: QueueTable, spec: QueueSpec): SpecIssue | null {
  const next: Record<string, QueueSpec> = { ...queues, [spec.name]: spec };
  const above = queuePath(next, spec.name).length;
  const below = heightBelow(next, spec.name, 0);
  if (above + below > MAX_QUEUE_DEPTH) return { path: 'parent', message: `parent: the queue tree would be ${above + below} levels deep; at most ${MAX_QUEUE_DEPTH}` };
  return null;
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
  const invalid = (path: string, message: string): { ok: false; error: RejectionReason } => ({ ok: false, error: { category: 'invalid', path, message } });
  if (queues[name] === undefined) return { ok: false, error: { category: 'unknown', path: 'identity.queue', message: `identity.queue: unknown queue ${name}` } };
  if (!isLeafQueue(queues, name)) return invalid('identity.queue', `identity.queue: queue ${name} has child queues; jobs go to a leaf queue`);
  const limits = queueRuntimeLimits(queues, name);
  if (limits.max === undefined) {
    return { ok: true, value: spec.runtimeLimitMs !== undefined || limits.default === undefined ? spec : { ...spec, runtimeLimitMs: limits.default } };
  }
  if (spec.runtimeLimitMs !== undefined && spec.runtimeLimitMs > limits.max) {
    return invalid('runtimeLimitMs', `runtimeLimitMs: ${spec.runtimeLimitMs} is above queue ${name}'s maximum of ${limits.max}`);
  }
  return { ok: true, value: spec.runtimeLimitMs !== undefined ? spec : { ...spec, runtimeLimitMs: Math.min(limits.default ?? limits.max, limits.max) } };
}
