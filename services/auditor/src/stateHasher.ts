import { nativeStateHash } from '@muster/bus';
import { CanonicalCache } from '@muster/core';
import type { State } from '@muster/core';

/** Hashes replayed states canonically with Node's native SHA-256, timed (on a large state it is the costliest check). */
export class StateHasher {
  // the folded states are frozen and share unchanged leaves: each hash serialises what changed
  private readonly cache = new CanonicalCache();

  constructor(private readonly timings: { hashMs: number }) {}

  /** The canonical hash of `state`. */
  hash(state: State): string {
    const started = performance.now();
    const hash = nativeStateHash(state, this.cache);
    this.timings.hashMs += performance.now() - started;
    return hash;
  }
}
