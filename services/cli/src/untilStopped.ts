/**
 * Resolves at the first SIGINT or SIGTERM (or when `signal` aborts), so a long-running command can
 * stop what it started; a second Ctrl-C while stopping exits at once with code 130.
 */
export function untilStopped(signal?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    const stop = (why: string): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      signal?.removeEventListener('abort', onAbort);
      process.once('SIGINT', () => process.exit(130));
      resolve(why);
    };
    const onInt = (): void => stop('SIGINT');
    const onTerm = (): void => stop('SIGTERM');
    const onAbort = (): void => stop('done');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
