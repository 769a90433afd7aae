/** The first 12 hex digits of a hash, as messages show it ('null' for none). */
export function shortHash(hash: string | null): string {
  return hash === null ? 'null' : hash.slice(0, 12);
}
