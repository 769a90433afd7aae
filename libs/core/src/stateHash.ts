import { canonicalHash } from './canonical.ts';
import type { State } from './state.ts';

/** The hash of a state: SHA-256 (hex) of its canonical JSON; what checkpoints and snapshots carry. */
export function stateHash(state: State): string {
  return canonicalHash(state);
}
