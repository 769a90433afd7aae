// Copy-on-write without proxies: the driver `fold` uses to run the one recipe (`apply`) over a
// batch of events at plain-object speed. The recipe reaches every object it mutates through its
// writer's `writable(parent, key)`; outside a copy-on-write run (an immer draft, or a private
// mutable state) that is just `parent[key]`, inside one it copies the child once per run,
// shallowly, and hangs the copy on the (already writable) parent. Everything the run did not reach
// stays shared with the input, which is never written to. The run's bookkeeping is the writer's,
// so nothing is kept between runs. See the top of evolve.ts for how the drivers fit together.

/**
 * How a recipe reaches what it mutates: `writable(parent, key)` gives `parent[key]` safe to
 * mutate, `created(value)` registers an object the recipe made. `IN_PLACE` (an immer draft, a
 * private mutable state) hands out the objects themselves; a copy-on-write run copies each once.
 */
export interface Writer {
  /** `parent[key]`, safe to mutate (`parent` must itself be writable). Call only for a key that holds an object. */
  writable<P extends object, K extends keyof P>(parent: P, key: K): P[K];
  /** `writable` for a record made by `emptyRecord` (or read from JSON): a copy is such a record too. */
  writableRecord<P extends object, K extends keyof P>(parent: P, key: K): P[K];
  /** Marks an object the recipe just made as writable for the rest of the run (no needless copy). */
  created<T extends object>(value: T): T;
  /** Whether `value` may be mutated in place now. */
  isWritable(value: object): boolean;
  /**
   * `created(value)`, or an equal frozen value the run's table of shared values (a caller's, kept
   * across runs) holds under `key`, or `value` itself frozen and put there: values that many
   * records repeat (a finished member's) are then held once. A shared value is never writable:
   * a write to it copies it first. Without a table (in place, or a run given none): `created(value)`.
   */
  shared<T extends object>(key: string, value: T): T;
}

/** The most values a table of shared values takes (beyond it, values are made as `created` makes them). */
const SHARED_LIMIT = 1 << 16;

/** The writer for a state nobody else holds (an immer draft, a private copy): everything is writable in place. */
export const IN_PLACE: Writer = Object.freeze({
  writable: <P extends object, K extends keyof P>(parent: P, key: K): P[K] => parent[key],
  writableRecord: <P extends object, K extends keyof P>(parent: P, key: K): P[K] => parent[key],
  created: <T extends object>(value: T): T => value,
  isWritable: (): boolean => true,
  shared: <T extends object>(_key: string, value: T): T => value,
});

/** One copy-on-write run: the objects it made or copied, writable in place until it ends. */
class CopyOnWriteRun implements Writer {
  readonly owned = new Set<object>();

  constructor(private readonly table: Map<string, object> | null = null) {}

  writable<P extends object, K extends keyof P>(parent: P, key: K): P[K] {
    const child = parent[key];
    if (this.owned.has(child as object)) return child;
    const copy = shallowCopy(child as object) as P[K];
    this.owned.add(copy as object);
    parent[key] = copy;
    return copy;
  }

  writableRecord<P extends object, K extends keyof P>(parent: P, key: K): P[K] {
    const child = parent[key];
    if (this.owned.has(child as object)) return child;
    const copy = emptyRecord<unknown>();
    const source = child as Record<string, unknown>;
    for (const k in source) copy[k] = source[k];
    this.owned.add(copy);
    parent[key] = copy as P[K];
    return copy as P[K];
  }

  created<T extends object>(value: T): T {
    this.owned.add(value);
    return value;
  }

  isWritable(value: object): boolean {
    return this.owned.has(value);
  }

  shared<T extends object>(key: string, value: T): T {
    const table = this.table;
    if (table === null) return this.created(value);
    const known = table.get(key);
    if (known !== undefined) return known as T;
    if (table.size >= SHARED_LIMIT) return this.created(value);
    table.set(key, Object.freeze(value));
    return value;
  }

  /** Ends the run: freezes what it made (unless `freeze: false`) and returns `root`. */
  end<T extends object>(root: T, options: { freeze?: boolean }): T {
    if (options.freeze !== false) for (const made of this.owned) Object.freeze(made);
    return root;
  }
}

/**
 * Runs `recipe` on a shallow copy of `base` whose descendants are copied on first write through
 * the writer it is handed; returns that copy and never writes to `base` or anything reachable from
 * it. Every object the run copied or registered with `created` is frozen at the end, so a later
 * run (or anyone) writing to it by mistake throws, as with immer's autoFreeze; values the recipe
 * took from elsewhere (event payloads) are not walked. `freeze: false` skips that for a scratch
 * copy that is dropped after the run (V8 takes about half a microsecond to freeze a small object).
 */
export function copyOnWrite<T extends object>(base: T, recipe: (root: T, w: Writer) => void, options: { freeze?: boolean } = {}): T {
  const run = new CopyOnWriteRun();
  const root = run.created(shallowCopy(base));
  recipe(root, run);
  return run.end(root, options);
}

/**
 * `copyOnWrite` for a recipe that pauses: the recipe is a generator, and so is the run, which
 * yields wherever the recipe does (a point where its caller may give way) and returns the same
 * copy. Nothing outside the run sees the copy before it ends. `shared`: the table of shared
 * values its writer's `shared` keeps (a caller's, across runs).
 */
export function* copyOnWriteSteps<T extends object>(base: T, recipe: (root: T, w: Writer) => Generator<void, void>, options: { freeze?: boolean; shared?: Map<string, object> } = {}): Generator<void, T> {
  const run = new CopyOnWriteRun(options.shared ?? null);
  const root = run.created(shallowCopy(base));
  yield* recipe(root, run);
  return run.end(root, options);
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

function shallowCopy<T extends object>(value: T): T {
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = value[i];
    return out as T;
  }
  // spread keeps a small object's hidden class (V8 clones it), so fold results read as fast as immer's
  return { ...value };
}
