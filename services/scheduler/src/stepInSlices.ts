import { setImmediate as giveWay } from 'node:timers/promises';
import type { Steps } from '@muster/core';

/** What `stepInSlices` returns: the steps' result and the time spent stepping them (ms, the event loop's turns between slices not counted). */
export interface Stepped<T> {
  value: T;
  busyMs: number;
}

/**
 * Runs `steps` to the end, giving the event loop a turn (timers, I/O: the lease refresh, the
 * input reader, appends answered) after every `sliceMs` of stepping, so that a long session does
 * not stop a leader from refreshing its lease; `onSlice` hears each slice end (the lease thread's
 * sign of progress). The result is what running them at once gives.
 */
export async function stepInSlices<T>(steps: Steps<T>, sliceMs: number, onSlice?: () => void): Promise<Stepped<T>> {
  let busyMs = 0;
  let sliceStart = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done === true) return { value: r.value, busyMs: busyMs + performance.now() - sliceStart };
    const now = performance.now();
    if (now - sliceStart >= sliceMs) {
      busyMs += now - sliceStart;
      onSlice?.();
      await giveWay();
      sliceStart = performance.now();
    }
  }
}
