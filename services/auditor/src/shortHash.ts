/** The first 12 hex digits of a hash, as messages show it. */
export function shortHash(hash: string): string {
  return hash.slice(0, 12);
}
