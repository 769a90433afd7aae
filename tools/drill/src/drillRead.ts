import { connect } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { within } from '@muster/stack';

/** How long a whole-stream read may go without a message before it is started again. */
export const READ_STALL_MS = 15_000;

/**
 * Reads a whole stream for the checks on a connection of its own, started again (up to
 * `attempts` times, each on a new connection) when no message came for `stallMs`. A bulk read of
 * a 200-gangs/s run (100,000 inputs) on the drill's shared connection made nats-server drop it as
 * a slow consumer (`MaxPending of 67108864 Exceeded`); the client reconnected and the read waited
 * for messages that never came, so the drill hung in its checks for as long as it was let run.
 */
export async function readWhole<T>(
  servers: readonly string[],
  what: string,
  read: (bus: Bus, signal: AbortSignal) => AsyncIterable<T>,
  progress: (line: string) => void,
  opts: { stallMs?: number; attempts?: number } = {},
): Promise<T[]> {
  const stallMs = opts.stallMs ?? READ_STALL_MS;
  const attempts = opts.attempts ?? 3;
  let lastError = 'no attempt';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const bus = await connect({ servers: [...servers], name: `muster-drill-read-${what}` });
    const stop = new AbortController();
    let lastAt = Date.now();
    let timer: NodeJS.Timeout | null = null;
    const stalled = new Promise<never>((_, reject) => {
      timer = setInterval(() => {
        if (Date.now() - lastAt <= stallMs) return;
        stop.abort();
        reject(new Error(`no message for ${stallMs} ms`));
      }, 500);
    });
    stalled.catch(() => undefined);
    const it = read(bus, stop.signal)[Symbol.asyncIterator]();
    try {
      const out: T[] = [];
      for (;;) {
        const next = it.next();
        // a stalled read's pending request may fail later: not an unhandled rejection (it ended the drill)
        next.catch(() => undefined);
        const r = await Promise.race([next, stalled]);
        if (r.done === true) return out;
        out.push(r.value);
        lastAt = Date.now();
      }
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      progress(`reading ${what} failed (${lastError}): attempt ${attempt} of ${attempts}`);
      // a read stuck on its connection may never settle: do not wait for it
      void it.return?.(undefined)?.catch(() => undefined);
    } finally {
      if (timer !== null) clearInterval(timer);
      await within(bus.close(), 5_000).catch(() => undefined);
    }
  }
  throw new Error(`could not read ${what}: ${lastError}`);
}
