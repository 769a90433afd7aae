/** A list cut to what one reply can carry, and what was cut. */
export interface FittedList<T> {
  items: T[];
  /** How many there were before the cut. */
  total: number;
  /** True when `items` holds fewer than `total`. */
  truncated: boolean;
}

// room left for the rest of a list reply (`{"ok":true,"jobs":[…],"seq":…,"total":…,"truncated":true}`)
const ENVELOPE_BYTES = 256;

/**
 * The first `limit` items (all when no limit is given), then as many of those as fit `maxBytes` of
 * JSON: a list reply larger than the server's max payload cannot be sent at all (a cluster of
 * thousands of jobs or nodes), so it says how many it left out instead.
 */
export function fitList<T>(items: readonly T[], limit: number | undefined, maxBytes: number): FittedList<T> {
  const wanted = limit === undefined ? items : items.slice(0, limit);
  let bytes = ENVELOPE_BYTES;
  let n = 0;
  for (; n < wanted.length; n++) {
    // each item's JSON and its comma
    bytes += Buffer.byteLength(JSON.stringify(wanted[n])) + 1;
    if (bytes > maxBytes) break;
  }
  return { items: wanted.slice(0, n), total: items.length, truncated: n < items.length };
}
