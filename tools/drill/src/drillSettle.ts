import { IN_STREAM, lastLogSequence, streamInfo } from '@muster/bus';
import type { MusterClient } from '@muster/client';
import type { DrillCluster, ReplicaStatus } from './drillCluster.ts';
import { sleep } from './drillSleep.ts';

/** Where the cluster came to rest after the workload. */
export interface SettleResult {
  /** When it was found at rest (or the wait gave up), ms since the epoch. */
  at: number;
  /** MUSTER_LOG's last sequence then. */
  logLastSeq: number;
  /** Every replica's status then (null: it did not answer). */
  statuses: Map<string, ReplicaStatus | null>;
  pending: number;
  running: number;
  /** Some of the jobs still running and pending (up to 5 of each), for a report that did not settle. */
  unsettled: string[];
  /** What kept it from resting, or null. */
  trouble: string | null;
  /** When it did not rest: whether a leader answered and the log still grew over the wait's last 10 s (a cluster working through a backlog, not a stalled one). */
  progressing: boolean;
  /** MUSTER_LOG growth over the wait's last 10 s, transactions a second (0 when at rest). */
  logRate: number;
}

/**
 * Waits (at most `timeoutMs`) until the cluster is at rest: every input ingested, no job pending
 * or running, and every replica answering at the log's last sequence, twice in a row.
 */
export async function settleDrill(cluster: DrillCluster, client: MusterClient, timeoutMs: number, progress: (line: string) => void): Promise<SettleResult> {
  const deadline = Date.now() + timeoutMs;
  let lastSaid = 0;
  let previousSeq = -1;
  let result: SettleResult = { at: Date.now(), logLastSeq: 0, statuses: new Map(), pending: -1, running: -1, unsettled: [], trouble: 'not checked yet', progressing: false, logRate: 0 };
  const seen: { at: number; seq: number }[] = [];
  while (Date.now() < deadline) {
    result = await look(cluster, client);
    if (result.logLastSeq >= 0) seen.push({ at: result.at, seq: result.logLastSeq });
    const quiet = result.trouble === null && result.logLastSeq === previousSeq;
    if (quiet) return result;
    previousSeq = result.trouble === null ? result.logLastSeq : -1;
    if (Date.now() - lastSaid > 5_000) {
      lastSaid = Date.now();
      progress(`settling: ${result.trouble ?? 'at rest, confirming'}`);
    }
    await sleep(result.trouble === null ? 300 : 500);
  }
  const recent = seen.filter((s) => s.at >= result.at - 10_000);
  const first = recent[0];
  const last = recent[recent.length - 1];
  const grew = first !== undefined && last !== undefined && last.seq > first.seq;
  const logRate = grew ? Math.round(((last.seq - first.seq) * 1000) / Math.max(1, last.at - first.at)) : 0;
  const leads = [...result.statuses.values()].some((s) => s?.role === 'leader');
  return { ...result, trouble: `not at rest after ${timeoutMs} ms: ${result.trouble ?? 'the log still grew'}`, progressing: grew && leads, logRate };
}

async function look(cluster: DrillCluster, client: MusterClient): Promise<SettleResult> {
  const at = Date.now();
  const logLastSeq = await lastLogSequence(cluster.bus).catch(() => -1);
  const inLastSeq = await streamInfo(cluster.bus, IN_STREAM).then((i) => i.lastSeq, () => -1);
  const statuses = await cluster.statuses(1_000);
  const base = { at, logLastSeq, statuses, pending: -1, running: -1, unsettled: [], progressing: false, logRate: 0 };
  const answered = [...statuses.values()].filter((s): s is ReplicaStatus => s !== null);
  const silent = [...statuses].filter(([, s]) => s === null).map(([id]) => id);
  if (silent.length > 0) return { ...base, trouble: `${silent.join(', ')} not answering` };
  const starting = answered.filter((s) => s.role === 'starting').map((s) => s.id);
  if (starting.length > 0) return { ...base, trouble: `${starting.join(', ')} still starting` };
  const leader = answered.find((s) => s.role === 'leader');
  if (leader === undefined) return { ...base, trouble: 'no leader' };
  if (leader.lastInputSeq < inLastSeq) return { ...base, trouble: `leader ingested inputs up to ${leader.lastInputSeq} of ${inLastSeq}` };
  const behind = answered.filter((s) => s.seq !== logLastSeq);
  if (behind.length > 0) return { ...base, trouble: `replicas at ${answered.map((s) => `${s.id}:${s.seq}`).join(' ')}, log at ${logLastSeq}` };
  // a few of each, and how many there are (a cluster with thousands pending does not list them all)
  const jobs = await Promise.all([client.jobList({ status: 'pending', limit: 5 }), client.jobList({ status: 'running', limit: 5 })]).catch(() => null);
  if (jobs === null) return { ...base, trouble: 'jobs could not be listed' };
  const [pending, running] = jobs;
  const counts = { ...base, pending: pending.total, running: running.total, unsettled: [...running.items, ...pending.items].map((j) => j.id) };
  if (pending.total > 0 || running.total > 0) return { ...counts, trouble: `${pending.total} jobs pending, ${running.total} running` };
  return { ...counts, trouble: null };
}
