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
 * `writable`; returns that copy and never writes to `base` or anything reachable from it. Every
 * object the run copied or registered with `created` is frozen at the end, so a later run (or
 * anyone) writing to it by mistake throws, as with immer's autoFreeze; values the recipe took
 * from elsewhere (event payloads) are not walked. `freeze: false` skips that for a scratch copy
 * that is dropped after the run (V8 takes about half a microsecond to freeze a small object).
 */
export function copyOnWrite<T extends object>(base: T, recipe: (root: T) => void, options: { freeze?: boolean } = {}): T {
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
  if (options.freeze !== false) for (const made of run) Object.freeze(made);
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

/**
 * A new empty record for keys that come and go (ids, names): an object without a prototype, which
 * V8 keeps as a hash table. A plain `{}` given thousands of distinct keys over time builds a hidden
 * class per key and copies slowly once a key was deleted (measured 25x slower per add, copy and
 * delete). Serialises like `{}`, and no key can hit an inherited member (`constructor`).
 */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** `writable` for a record made by `emptyRecord` (or read from JSON): the copy is such a record too. */
export function writableRecord<P extends object, K extends keyof P>(parent: P, key: K): P[K] {
  const child = parent[key];
  if (owned === null || owned.has(child as object)) return child;
  const copy = emptyRecord<unknown>();
  const source = child as Record<string, unknown>;
  for (const k in source) copy[k] = source[k];
  owned.add(copy);
  parent[key] = copy as P[K];
  return copy as P[K];
}

/** Marks an object the recipe just made as writable for the rest of the run (no needless copy) and to be frozen at its end. */
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
  // spread keeps a small object's hidden class (V8 clones it), so fold results read as fast as immer's
  return { ...value };
}
