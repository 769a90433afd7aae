/**
 * `work`, or a rejection with `expired()` after `timeoutMs`: a JetStream read (an object store
 * chunk, a consumer's pull) can stall for good without an error. Work that fails after the bound
 * is not an unhandled rejection.
 */
export async function bounded<T>(work: Promise<T>, timeoutMs: number, expired: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(expired()), timeoutMs);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
