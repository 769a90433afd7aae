// A long computation in steps: the core yields between units of work (a session between attempts),
// so a caller with other duties (a leader refreshing its lease, reading inputs) can give the event
// loop a turn between them; the result does not depend on where, or whether, it paused.

/** A computation in steps: a generator that yields where its caller may give way, and returns its result. */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to the end without pausing; their result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}
