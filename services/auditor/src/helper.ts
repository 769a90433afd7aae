import type { IngestGroup } from './ingestGroups.ts';

/**
 * The re-derivation of one transaction, handed to a helper thread: the session it starts (or
 * continues, when the helper started it), or its inputs, grouped and read by the main thread.
 */
export type HandedWork = { kind: 'session' } | { kind: 'ingest'; groups: IngestGroup[] };

/**
 * A thread that folds the same log and takes re-derivations over when it has room (the worker of a
 * parallel audit), as the main thread's auditor sees it.
 */
export interface Helper {
  /** Whether it keeps up well enough to be given more work now. */
  hasRoom(): boolean;
  /** Hands on every transaction, in order (its stored bytes), with the work it takes over, if any. */
  hand(seq: number, payload: Uint8Array, work: HandedWork | null): void;
}
