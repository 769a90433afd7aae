/**
 * Runs `attempt` over and over until `signal` aborts: each attempt gets its own signal, which the
 * function handed to `onRestart` aborts (a watchdog restarts a reader that silently stopped), and a
 * failed attempt goes to `onError` (which logs and waits) before the next one.
 */
export async function runRestartable(
  signal: AbortSignal,
  onRestart: (restart: () => void) => void,
  attempt: (signal: AbortSignal) => Promise<void>,
  onError: (err: unknown) => Promise<void>,
): Promise<void> {
  while (!signal.aborted) {
    const controller = new AbortController();
    const restart = (): void => controller.abort();
    signal.addEventListener('abort', restart, { once: true });
    onRestart(restart);
    try {
      await attempt(controller.signal);
    } catch (err) {
      if (signal.aborted) return;
      await onError(err);
    } finally {
      signal.removeEventListener('abort', restart);
    }
  }
}
