import { streamDefinitions, streamInfo } from '@muster/bus';
import type { Bus, StreamState } from '@muster/bus';
import { sleep } from './drillSleep.ts';
import { APPEND_ONLY } from './drillTargets.ts';

/** A stretch of time, ms since the epoch. */
export interface Interval {
  from: number;
  to: number;
}

/** A stream nothing deletes from whose first sequence moved past 1, as its leader reported it: JetStream lost its head. */
export interface HeadLoss {
  stream: string;
  /** The first sequence it then held. */
  firstSeq: number;
  /** When the watch first saw it (ms since the epoch). */
  at: number;
}

/** Watches whether JetStream can serve muster's streams; `stop()` returns when it could not, and the heads it lost. */
export interface JetStreamWatch {
  stop(): Promise<{ down: Interval[]; headLosses: HeadLoss[] }>;
}

/**
 * Asks every `intervalMs` for the info of each stream and KV bucket muster needs (MUSTER_IN,
 * MUSTER_LOG, MUSTER_DECISIONS, the lease bucket), each answered by that stream's leader. A look
 * where one does not answer within `timeoutMs`, or has no leader, starts a stretch of
 * unavailability that the next good look ends. nats-server's followers wait 4 to 9 s (its raft
 * election timeout) before they replace a killed leader, and no scheduler can write meanwhile.
 */
export async function watchJetStream(bus: Bus, opts: { intervalMs?: number; timeoutMs?: number; onHeadLoss?: (loss: HeadLoss) => void } = {}): Promise<JetStreamWatch> {
  const quick = bus.withTimeout(opts.timeoutMs ?? 1_000);
  const names = streamDefinitions.filter((d) => d.kind !== 'objectStore').map((d) => d.config.name);
  const down: Interval[] = [];
  const headLosses: HeadLoss[] = [];
  // a stream nothing deletes from starts at 1 for ever: a later first sequence is JetStream's loss,
  // said when first seen (and again when it grows), so that the faults beside it can be named
  const heads = new Map<string, number>();
  const lookAtHead = (name: string, info: StreamState, at: number): void => {
    if (!APPEND_ONLY.has(name) || !info.authoritative || info.firstSeq <= Math.max(1, heads.get(name) ?? 1)) return;
    heads.set(name, info.firstSeq);
    const loss = { stream: name, firstSeq: info.firstSeq, at };
    headLosses.push(loss);
    opts.onHeadLoss?.(loss);
  };
  let downSince: number | null = null;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      const look = (name: string): Promise<boolean> =>
        streamInfo(quick, name).then(
          (info) => {
            lookAtHead(name, info, at);
            return info.leader !== '';
          },
          () => false,
        );
      const ok = await Promise.all(names.map(look)).then((all) => all.every(Boolean));
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
      return { down, headLosses };
    },
  };
}

/** How much of [from, to] the intervals cover. */
export function overlapMs(from: number, to: number, intervals: readonly Interval[]): number {
  let total = 0;
  for (const i of intervals) total += Math.max(0, Math.min(to, i.to) - Math.max(from, i.from));
  return total;
}
