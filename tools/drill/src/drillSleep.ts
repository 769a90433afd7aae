import { sleep } from '@muster/bus';

// the drill's files take the one sleep from here, beside the drill's own wait for a moment
export { sleep };

/** Resolves at `at` (ms since the epoch), or as soon as `signal` aborts (at once if it already has). */
export function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  return sleep(Math.max(0, at - Date.now()), signal);
}
