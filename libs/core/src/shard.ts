/** How many shards node and job records are spread over (keeps immer's per-write copies small). */
export const SHARD_COUNT = 256;

/** The shard keys, made once: `shardOf` returns one of these strings instead of building one per call. */
const SHARD_KEYS: readonly string[] = Array.from({ length: SHARD_COUNT }, (_, i) => String(i));

/** The shard key of an id: FNV-1a (32 bit) of its UTF-16 code units, modulo SHARD_COUNT. */
export function shardOf(id: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return SHARD_KEYS[(h >>> 0) % SHARD_COUNT]!;
}

/** A record of records keyed by shard, then by id. */
export type Sharded<T> = Record<string, Record<string, T>>;

/** Reads one entry of a sharded record. */
export function shardGet<T>(sharded: Sharded<T>, id: string): T | undefined {
  return sharded[shardOf(id)]?.[id];
}

/** Writes one entry of a sharded record (in place: call on a draft or a private copy). */
export function shardSet<T>(sharded: Sharded<T>, id: string, value: T): void {
  const key = shardOf(id);
  const shard = sharded[key] ?? (sharded[key] = {});
  shard[id] = value;
}

/** Deletes one entry of a sharded record (in place), dropping the shard when it empties. */
export function shardDelete<T>(sharded: Sharded<T>, id: string): void {
  const key = shardOf(id);
  const shard = sharded[key];
  if (shard === undefined || !(id in shard)) return;
  delete shard[id];
  for (const _ in shard) return;
  delete sharded[key];
}

/** Every entry of a sharded record, sorted by id (a defined order wherever order can reach output). */
export function shardEntriesSorted<T>(sharded: Sharded<T>): [string, T][] {
  const out: [string, T][] = [];
  for (const key in sharded) {
    const shard = sharded[key]!;
    for (const id in shard) out.push([id, shard[id]!]);
  }
  out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return out;
}

/** Number of entries in a sharded record. */
export function shardSize<T>(sharded: Sharded<T>): number {
  let n = 0;
  for (const key in sharded) n += Object.keys(sharded[key]!).length;
  return n;
}
