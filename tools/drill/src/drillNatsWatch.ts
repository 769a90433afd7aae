import { streamDefinitions, streamInfo } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { sleep } from './drillSleep.ts';

/** A stretch of time, ms since the epoch. */
export interface Interval {
  from: number;
  to: number;
}

/** Watches whether JetStream can serve muster's streams; `stop()` returns when it could not. */
export interface JetStreamWatch {
  stop(): Promise<Interval[]>;
}

/**
 * Asks every `intervalMs` for the info of each stream and KV bucket muster needs (MUSTER_IN,
 * MUSTER_LOG, MUSTER_DECISIONS, the lease bucket), each answered by that stream's leader. A look
 * where one does not answer within `timeoutMs`, or has no leader, starts a stretch of
 * unavailability that the next good look ends. nats-server's followers wait 4 to 9 s (its raft
 * election timeout) before they replace a killed leader, and no scheduler can write meanwhile.
 */
export async function watchJetStream(bus: Bus, opts: { intervalMs?: number; timeoutMs?: number } = {}): Promise<JetStreamWatch> {
  const quick = bus.withTimeout(opts.timeoutMs ?? 1_000);
  const names = streamDefinitions.filter((d) => d.kind !== 'objectStore').map((d) => d.config.name);
  const down: Interval[] = [];
  let downSince: number | null = null;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      const ok = await Promise.all(names.map((name) => streamInfo(quick, name).then((info) => info.leader !== '', () => false))).then((all) => all.every(Boolean));
      if (!ok && downSince === null) downSince = at;
      if (ok && downSince !== null) {
        down.push({ from: downSince, to: at });
        downSince = null;
      }
      await sleep(Math.max(0, (opts.intervalMs ?? 250) - (Date.now() - at)));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      if (downSince !== null) down.push({ from: downSince, to: Date.now() });
      return down;
    },
  };
}

/** How much of [from, to] the intervals cover. */
export function overlapMs(from: number, to: number, intervals: readonly Interval[]): number {
  let total = 0;
  for (const i of intervals) total += Math.max(0, Math.min(to, i.to) - Math.max(from, i.from));
  return total;
}
