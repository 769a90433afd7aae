import type { ReplicaStatus } from './drillCluster.ts';
import { sleep } from './drillSleep.ts';

/** A stretch in which one replica did not answer its status while another did, longer than the bound. */
export interface SilentReplica {
  id: string;
  /** The replica's process then (-1: none was running). */
  pid: number;
  /** When it last answered (or the watch began), ms since the watch's `origin`. */
  from: number;
  /** How long it stayed silent: until it answered again, or the watch's end. */
  ms: number;
  /** Whether it answered again before the watch ended. */
  answeredAgain: boolean;
}

/** What the replica watch needs of the cluster: its replica ids, their statuses and their processes. */
export interface WatchedReplicas {
  readonly replicaIds: readonly string[];
  statuses(timeoutMs?: number): Promise<Map<string, ReplicaStatus | null>>;
  replica(id: string): { readonly pid: number; readonly running: boolean };
}

/** Watches that every replica answers; `stop()` returns each one that stopped answering for longer than the bound. */
export interface ReplicaWatch {
  stop(): Promise<SilentReplica[]>;
}

/**
 * Asks every replica's status each `intervalMs`. A replica that does not answer, in looks where
 * another one does (so the drill's connection and NATS serve requests), for longer than `boundMs`
 * is named at once through `say` (its id, pid and how long) and kept for the report; it counts from
 * its last answer. A replica answers while it rebuilds (role 'starting'): a slow rebuild is the
 * restart fault's to judge (awaitAnswer), silence is a process or connection that stopped.
 */
export function watchReplicas(
  cluster: WatchedReplicas,
  opts: { boundMs: number; origin: number; intervalMs?: number; timeoutMs?: number; say?: (line: string) => void },
): ReplicaWatch {
  const lastAnswer = new Map<string, number>(cluster.replicaIds.map((id) => [id, Date.now()]));
  const open = new Map<string, SilentReplica>();
  const found: SilentReplica[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      const statuses = await cluster.statuses(opts.timeoutMs ?? 1_000);
      const heard = [...statuses.values()].some((s) => s !== null);
      for (const [id, status] of statuses) {
        if (status !== null) {
          const silent = open.get(id);
          if (silent !== undefined) {
            silent.ms = at - opts.origin - silent.from;
            silent.answeredAgain = true;
            opts.say?.(`replica ${id} (pid ${silent.pid}) answers again after ${Math.round(silent.ms / 1000)} s`);
            open.delete(id);
          }
          lastAnswer.set(id, at);
          continue;
        }
        // nobody answered: the drill's connection or NATS, not this replica
        if (!heard) continue;
        const since = lastAnswer.get(id) ?? at;
        if (open.has(id) || at - since <= opts.boundMs) continue;
        const proc = cluster.replica(id);
        const silent: SilentReplica = { id, pid: proc.running ? proc.pid : -1, from: since - opts.origin, ms: at - since, answeredAgain: false };
        open.set(id, silent);
        found.push(silent);
        opts.say?.(`replica ${id} (pid ${silent.pid}${proc.running ? '' : ', not running'}) has not answered its status for ${Math.round(silent.ms / 1000)} s while another replica did`);
      }
      await sleep(Math.max(0, (opts.intervalMs ?? 2_000) - (Date.now() - at)));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      for (const silent of open.values()) silent.ms = Date.now() - opts.origin - silent.from;
      return found;
    },
  };
}
