import type { Listed } from '@muster/client';

/** The line a list command writes to stderr when the reply left items out (`showing 3120 of 24011 jobs: …`), or null. */
export function truncationNote(listed: Listed<unknown>, what: string): string | null {
  if (!listed.truncated) return null;
  return `showing ${listed.items.length} of ${listed.total} ${what}: the rest did not fit one reply (--limit, or --status for jobs, asks for fewer)`;
}
