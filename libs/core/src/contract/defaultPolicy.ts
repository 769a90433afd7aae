import type { Policy } from './types.ts';

/**
 * The v1.1 defaults (DESIGN.md §11): EASY backfill (one reservation a session) and a day assumed
 * for a gang without a runtime limit. A new log starts with them; a PolicySet on a log that had
 * none fills in what it does not name from here.
 */
export const DEFAULT_POLICY: Readonly<Policy> = Object.freeze({ reserveDepth: 1, assumedRuntimeMs: 86_400_000 });
