// Sharded tables: the nodes, jobs and pending jobs of the state. An id's FNV-1a hash picks one of
// 4096 leaves of a fixed trie of arrays (16 slots a level, three levels); a leaf lists its entries
// in id order. Why arrays: immer and the copy-on-write fold copy every object they write to, once
// per batch, and on V8 (Node 20) copying a record of more than about 16 string keys, or a frozen
// record with integer-like keys, costs 20 to 100 times more per key than copying an array, while
// reading small records of varying shapes by key goes megamorphic. Arrays are cheap both ways.
// With 256 flat record shards, copying shards was most of the cost of a fold (docs/benchmarks.md).

/** How many leaves a sharded table has (16 × 16 × 16). */
export const SHARD_COUNT = 4096;

/** Slots in one trie level. */
export const SHARD_FANOUT = 16;

/** The depth of a leaf below the root (three levels of slots): what a walk of the trie stops at. */
export const SHARD_LEAF_DEPTH = 3;

/** Something a table holds: an entity with a spec id (nodes, jobs), or an id itself (pending). */
export type ShardEntry = string | { readonly spec: { readonly id: string } };

/** One leaf: the entries of one shard, in ascending id order (UTF-16 code units). */
export type ShardLeaf<T extends ShardEntry> = T[];

/** A trie level: 16 slots, null where nothing below holds an entry. */
export type ShardLevel<C> = (C | null)[];

/**
 * A table keyed by id, as a three-level trie of 16-slot arrays: `table[a][b][c]` is the leaf of
 * shard `a·256 + b·16 + c` (`shardOf`). The root always has 16 slots; a level or leaf below exists
 * only while it holds an entry, so equal contents serialise equally whatever the history.
 */
export type Sharded<T extends ShardEntry> = ShardLevel<ShardLevel<ShardLevel<ShardLeaf<T>>>>;

/** An empty table. */
export function emptySharded<T extends ShardEntry>(): Sharded<T> {
  return new Array<null>(SHARD_FANOUT).fill(null);
}

/** The shard (leaf) number of an id, 0…4095: FNV-1a (32 bit) of its UTF-16 code units, low 12 bits. */
export function shardOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h & (SHARD_COUNT - 1);
}

/** The id of an entry. */
export function entryId(entry: ShardEntry): string {
  return typeof entry === 'string' ? entry : entry.spec.id;
}

/** The leaf of shard number `shard` (undefined or null when it holds nothing). */
export function shardLeaf<T extends ShardEntry>(table: Sharded<T>, shard: number): ShardLeaf<T> | null | undefined {
  return table[shard >>> 8]?.[(shard >>> 4) & 15]?.[shard & 15];
}

/**
 * Where `id` is in a leaf: its index, or, when it is absent, `-(insertion index) - 1`
 * (binary search over ids in ascending order).
 */
export function leafIndex<T extends ShardEntry>(leaf: readonly T[], id: string): number {
  let lo = 0;
  let hi = leaf.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = entryId(leaf[mid]!);
    if (at < id) lo = mid + 1;
    else if (at > id) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}

/** The entry with `id` in a leaf (undefined when absent). */
export function leafGet<T extends ShardEntry>(leaf: readonly T[] | null | undefined, id: string): T | undefined {
  if (leaf === null || leaf === undefined) return undefined;
  const i = leafIndex(leaf, id);
  return i >= 0 ? leaf[i] : undefined;
}

/** Reads one entry of a sharded table. */
export function shardGet<T extends ShardEntry>(table: Sharded<T>, id: string): T | undefined {
  return leafGet(shardLeaf(table, shardOf(id)), id);
}

/** Whether a sharded table holds `id`. */
export function shardHas<T extends ShardEntry>(table: Sharded<T>, id: string): boolean {
  return shardGet(table, id) !== undefined;
}

/** Every non-empty leaf with its shard number, in shard order (for walking a table leaf by leaf). */
export function shardLeaves<T extends ShardEntry>(table: Sharded<T>): [number, ShardLeaf<T>][] {
  const out: [number, ShardLeaf<T>][] = [];
  for (let a = 0; a < table.length; a++) {
    const level2 = table[a];
    if (level2 === null || level2 === undefined) continue;
    for (let b = 0; b < level2.length; b++) {
      const level3 = level2[b];
      if (level3 === null || level3 === undefined) continue;
      for (let c = 0; c < level3.length; c++) {
        const leaf = level3[c];
        if (leaf !== null && leaf !== undefined && leaf.length > 0) out.push([(a << 8) | (b << 4) | c, leaf]);
      }
    }
  }
  return out;
}

/** Every entry of a sharded table, sorted by id (a defined order wherever order can reach output). */
export function shardValuesSorted<T extends ShardEntry>(table: Sharded<T>): T[] {
  const out: T[] = [];
  for (const [, leaf] of shardLeaves(table)) for (const entry of leaf) out.push(entry);
  out.sort((x, y) => {
    const a = entryId(x);
    const b = entryId(y);
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return out;
}

/** Every entry of a sharded table with its id, sorted by id. */
export function shardEntriesSorted<T extends ShardEntry>(table: Sharded<T>): [string, T][] {
  return shardValuesSorted(table).map((entry) => [entryId(entry), entry]);
}

/** Number of entries in a sharded table. */
export function shardSize<T extends ShardEntry>(table: Sharded<T>): number {
  let n = 0;
  for (const [, leaf] of shardLeaves(table)) n += leaf.length;
  return n;
}
