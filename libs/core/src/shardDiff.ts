// The parts of a sharded table that changed (issue 32: a session's cost follows what changed).
// States share what a batch did not write (copy-on-write copies the path to every leaf it
// writes), so a level or a leaf that is the very same frozen object as one read before holds the
// same entries, and everything below it too. A part that is not frozen (a draft's, a bulk
// replay's) may still change in place: it is read every time and never remembered. The indices
// kept across sessions walk their tables through here, so that rule is written once.
import { SHARD_FANOUT, SHARD_LEAF_DEPTH } from './shard.ts';

/** A level or a leaf of a sharded table, or nothing at its place. */
export type ShardPart = readonly unknown[] | null | undefined;

/** Whether a part cannot change in place: absent, or frozen. */
export function settled(part: ShardPart): boolean {
  return part === null || part === undefined || Object.isFrozen(part);
}

/**
 * Walks table `to` where it differs from `from` (null: an empty table), skipping each part that is
 * the very same object as `from`'s at its place; calls `leaf(shard, was, now)` for each leaf
 * place that differs, in shard order. Returns whether every part of `to` walked was frozen (then
 * `to` may stand as a later walk's `from`; `from` must be such a table, or the walk's input now).
 */
export function diffShards(from: ShardPart, to: ShardPart, leaf: (shard: number, was: ShardPart, now: ShardPart) => void): boolean {
  return diffPart(from, to, 0, 0, leaf);
}

function diffPart(a: ShardPart, b: ShardPart, depth: number, shard: number, leaf: (shard: number, was: ShardPart, now: ShardPart) => void): boolean {
  // (a slot holds null where nothing is below it, a missing level gives undefined: the same)
  if (a === b || ((a === null || a === undefined) && (b === null || b === undefined))) return true;
  let frozen = settled(b);
  if (depth === SHARD_LEAF_DEPTH) {
    leaf(shard, a, b);
    return frozen;
  }
  const n = Math.max(a?.length ?? 0, b?.length ?? 0);
  for (let i = 0; i < n; i++) frozen = diffPart(a?.[i] as ShardPart, b?.[i] as ShardPart, depth + 1, shard * SHARD_FANOUT + i, leaf) && frozen;
  return frozen;
}

/** How `foldParts` reads a table part by part into values of type `V`. */
export interface PartFold<V> {
  /** The value of leaf `ids` (shard number `shard`), read beside `beside`, the leaf of the other table at its place. */
  leaf(ids: readonly unknown[], beside: ShardPart, shard: number): V;
  /** The value of a level before its parts are added. */
  empty(): V;
  /** Adds a part's value into its level's. */
  add(level: V, part: V): void;
  /** Whether a value remembered for a part serves now (it is then taken as read); absent: always. */
  reuse?(value: V): boolean;
}

/**
 * What was read under each frozen part of a table (a level or a leaf), beside the part of another
 * table at the same place (the jobs table beside a table of ids): the same frozen part beside the
 * same part holds the same entries with the same records, so its value still holds. Kept by the
 * index that reads through it (a turn context's, a deadline's), never in the state.
 */
export class PartMemo<V> {
  private readonly memo = new WeakMap<object, { beside: ShardPart; value: V }>();

  /** The value remembered for `part` beside `beside`, if any. */
  get(part: object, beside: ShardPart): V | undefined {
    const known = this.memo.get(part);
    return known !== undefined && known.beside === beside ? known.value : undefined;
  }

  /** Remembers `value` for `part` beside `beside`, read with everything under both frozen. */
  set(part: object, beside: ShardPart, value: V): void {
    this.memo.set(part, { beside, value });
  }
}

/**
 * The value of table `part` (a level at `depth`, or at SHARD_LEAF_DEPTH a leaf, of shard or
 * prefix `shard`) beside `beside`, folded from its leaves, reusing what `memo` holds for a part
 * and remembering it for each part read with everything under it and beside it frozen (no memo:
 * every part is read).
 */
export function foldParts<V>(memo: PartMemo<V> | null, part: readonly unknown[], beside: ShardPart, fold: PartFold<V>, depth = 0, shard = 0): V {
  // (a table read before is served without setting up a walk: the common case, several times a turn)
  return reused(memo, part, beside, fold) ?? new PartWalk(memo, fold).fresh(part, beside, depth, shard);
}

// what `memo` holds for `part` beside `beside`, if it serves now
function reused<V>(memo: PartMemo<V> | null, part: readonly unknown[], beside: ShardPart, fold: PartFold<V>): V | undefined {
  const known = memo?.get(part, beside);
  return known !== undefined && (fold.reuse === undefined || fold.reuse(known)) ? known : undefined;
}

// one fold: `frozen` holds whether the part last read was frozen with everything under and beside it
class PartWalk<V> {
  frozen = true;

  constructor(private readonly memo: PartMemo<V> | null, private readonly fold: PartFold<V>) {}

  // the value of a part not served from the memo
  fresh(part: readonly unknown[], beside: ShardPart, depth: number, shard: number): V {
    let frozen = settled(part) && settled(beside);
    let value: V;
    if (depth === SHARD_LEAF_DEPTH) value = this.fold.leaf(part, beside, shard);
    else {
      value = this.fold.empty();
      for (let i = 0; i < part.length; i++) {
        const child = part[i] as ShardPart;
        if (child === null || child === undefined) continue;
        const near = beside?.[i] as ShardPart;
        const known = reused(this.memo, child, near, this.fold);
        if (known !== undefined) this.fold.add(value, known);
        else {
          this.fold.add(value, this.fresh(child, near, depth + 1, shard * SHARD_FANOUT + i));
          frozen &&= this.frozen;
        }
      }
    }
    if (frozen) this.memo?.set(part, beside, value);
    this.frozen = frozen;
    return value;
  }
}
