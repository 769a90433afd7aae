// Copy-on-write without proxies: the driver `fold` uses to run the one recipe (`apply`) over a
// batch of events at plain-object speed. The recipe reaches every object it mutates through
// `writable(parent, key)`; outside a copy-on-write run (an immer draft, or a private mutable state)
// that is just `parent[key]`, inside one it copies the child once per run, shallowly, and hangs the
// copy on the (already writable) parent. Everything the run did not reach stays shared with the
// input, which is never written to. See the top of evolve.ts for how the drivers fit together.

/** Objects this copy-on-write run made or copied: writable in place until the run ends (null: no run). */
let owned: Set<object> | null = null;

/**
 * Runs `recipe` on a shallow copy of `base` whose descendants are copied on first write through
 * `writable`; returns that copy, deep-frozen where it is new (like immer's autoFreeze), and never
 * writes to `base` or anything reachable from it.
 */
export function copyOnWrite<T extends object>(base: T, recipe: (root: T) => void): T {
  if (owned !== null) throw new Error('copyOnWrite: runs do not nest');
  const run = new Set<object>();
  const root = shallowCopy(base);
  run.add(root);
  owned = run;
  try {
    recipe(root);
  } finally {
    owned = null;
  }
  freezeNew(root);
  return root;
}

/**
 * `parent[key]`, safe to mutate: in a copy-on-write run, a shallow copy made once per run and
 * stored in `parent` (which must itself be writable); otherwise the child itself (a draft or a
 * private object). Call only for a key that holds an object.
 */
export function writable<P extends object, K extends keyof P>(parent: P, key: K): P[K] {
  const child = parent[key];
  if (owned === null || owned.has(child as object)) return child;
  const copy = shallowCopy(child as object) as P[K];
  owned.add(copy as object);
  parent[key] = copy;
  return copy;
}

/** Whether `value` may be mutated in place now: always outside a copy-on-write run. */
export function isWritable(value: object): boolean {
  return owned === null || owned.has(value);
}

/** Marks an object the recipe just made as writable for the rest of the run (saves a needless copy). */
export function created<T extends object>(value: T): T {
  if (owned !== null) owned.add(value);
  return value;
}

function shallowCopy<T extends object>(value: T): T {
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = value[i];
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) out[key] = value[key];
  return out as T;
}

// immer's autoFreeze rule: freeze what is not frozen yet, and descend only into what was not
// (an input produced by immer or by `copyOnWrite` is frozen, so only this run's objects are walked).
function freezeNew(value: object): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (typeof item === 'object' && item !== null) freezeNew(item);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item === 'object' && item !== null) freezeNew(item);
  }
}
