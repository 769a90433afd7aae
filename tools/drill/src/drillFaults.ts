import { lastLogSequence } from '@muster/bus';
import { libfaketime } from './drillCluster.ts';
import { diskFaultUnavailable, fillDisk } from './drillDiskFault.ts';
import { partitionUnavailable, slowNetworkUnavailable } from './drillNetworkChecks.ts';
import { partitionLeader, partitionNats, slowNetwork } from './drillPartition.ts';
import type { ReplicaStatus } from './drillCluster.ts';
import type { FaultContext, FaultRecord } from './drillFaultRecord.ts';
import type { FaultKind } from './drillOptions.ts';
import { sleep } from './drillSleep.ts';
import { awaitNodeCurrent, currentLeader, pickNatsNode, recoverStalledNode, restartNatsNode } from './drillTargets.ts';

type Injector = (record: FaultRecord, ctx: FaultContext) => Promise<void>;

/** The kinds whose target is a NATS node. */
const NATS_FAULTS: ReadonlySet<FaultKind> = new Set<FaultKind>(['restart-nats', 'full-disk', 'partition-nats']);

/** Each kind's injection, and why this machine cannot inject it (skipped, the record says why), or null when it can. */
const FAULTS: Record<FaultKind, { inject: Injector; unavailable?: () => string | null }> = {
  'kill-leader': { inject: killLeader },
  'pause-leader': { inject: pauseLeader },
  'restart-nats': { inject: restartNats },
  'restart-standby': { inject: restartStandby },
  'fast-clock': { inject: fastClock, unavailable: () => (libfaketime() === null ? 'libfaketime is not installed (apt-get install -y faketime)' : null) },
  'full-disk': { inject: fillDisk, unavailable: diskFaultUnavailable },
  'partition-leader': { inject: partitionLeader, unavailable: partitionUnavailable },
  'partition-nats': { inject: partitionNats, unavailable: partitionUnavailable },
  'slow-network': { inject: slowNetwork, unavailable: slowNetworkUnavailable },
};

/** Injects one fault of `kind` and brings back what it took down; never throws (errors are recorded). */
export async function injectFault(n: number, kind: FaultKind, ctx: FaultContext): Promise<FaultRecord> {
  const record: FaultRecord = { n, kind, target: null, at: Date.now(), endedAt: 0, skipped: null, error: null, nextLeader: null };
  try {
    const fault = FAULTS[kind] as (typeof FAULTS)[FaultKind] | undefined;
    if (fault === undefined) throw new Error(`unknown fault ${String(kind)}`);
    record.skipped = fault.unavailable?.() ?? null;
    if (record.skipped === null) await fault.inject(record, ctx);
  } catch (err) {
    record.error = err instanceof Error ? err.message : String(err);
  } finally {
    record.endedAt = Date.now();
    // a NATS node is free for the next NATS fault only once its copies have caught up
    const node = NATS_FAULTS.has(kind) && record.skipped === null ? ctx.cluster.nats.nodes.find((n) => n.name === record.target) : undefined;
    if (node !== undefined && node.running) {
      try {
        record.caughtUpMs = await awaitNodeCurrent(ctx.cluster.bus, node.name, 120_000, node.monitorPort, ctx.cutShort);
      } catch (err) {
        record.error ??= err instanceof Error ? err.message : String(err);
      }
    }
    if (record.target !== null) ctx.busy.delete(record.target);
  }
  ctx.progress(faultLine(record));
  return record;
}

/** One progress line for a fault. */
export function faultLine(r: FaultRecord): string {
  const what = `fault ${r.n} ${r.kind}${r.target === null ? '' : ` ${r.target}`}`;
  if (r.skipped !== null) return `${what}: skipped (${r.skipped})`;
  if (r.error !== null) return `${what}: ERROR ${r.error}`;
  const next = r.nextLeader === null ? '' : `, ${r.nextLeader} leads`;
  const slow = r.slow === undefined ? '' : ` (${r.slow.delayMs} ms and ${r.slow.loss * 100} % loss on ${r.slow.connections} replica connections through the proxies; a status request took ${r.slow.statusMs.before} ms before, ${r.slow.statusMs.during} ms during)`;
  const current = r.caughtUpMs === undefined ? '' : `, its copies current ${r.caughtUpMs} ms after`;
  const yesNo = (b: boolean): string => (b ? 'yes' : 'no');
  const disk = r.disk === undefined ? '' : ` (tmpfs of ${r.disk.mb} MB full for ${r.disk.fullMs} ms; its monitor answered at the end of that: ${yesNo(r.disk.answeredWhenFull)}, once freed: ${yesNo(r.disk.answeredAfterFree)}; restarted on ${r.disk.recovery === 'empty-store' ? 'an empty store' : 'the store it left'})`;
  const stalled = r.stalledRestarts === undefined ? '' : `, restarted ${r.stalledRestarts} more time(s) when its store stopped catching up`;
  return `${what}: done in ${r.endedAt - r.at} ms${current}${stalled}${disk}${slow}${next}`;
}

/** Waits until a restarted replica answers its status (it has rebuilt and stands by). */
async function awaitAnswer(ctx: FaultContext, id: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await ctx.cluster.status(id, 500)) !== null) return;
    await sleep(200);
  }
  throw new Error(`${id} did not answer its status within ${timeoutMs} ms of its restart`);
}

async function killLeader(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const id = await currentLeader(record, ctx);
  if (id === null) return;
  record.at = Date.now();
  if ((await ctx.cluster.replica(id).kill()) === null) throw new Error(`${id} did not die after SIGKILL`);
  record.nextLeader = (await ctx.cluster.leader(30_000, id))?.id ?? null;
  // the killed replica comes back as a new process, which rebuilds and stands by
  ctx.cluster.startReplica(id);
  await awaitAnswer(ctx, id);
}

async function pauseLeader(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const id = await currentLeader(record, ctx);
  if (id === null) return;
  const proc = ctx.cluster.replica(id);
  record.at = Date.now();
  proc.signal('SIGSTOP');
  ctx.cluster.paused.add(id);
  try {
    const next = ctx.cluster.leader(ctx.opts.pauseMs, id);
    await sleep(ctx.opts.pauseMs);
    record.nextLeader = (await next)?.id ?? null;
  } finally {
    proc.signal('SIGCONT');
    ctx.cluster.paused.delete(id);
  }
  await awaitAnswer(ctx, id, 30_000);
}

async function restartNats(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const node = pickNatsNode(record, ctx);
  if (node === null) return;
  record.at = Date.now();
  await node.kill('SIGKILL');
  await sleep(ctx.opts.natsDownMs);
  await restartNatsNode(node);
  await recoverStalledNode('restart-nats', node, record, ctx);
}

async function restartStandby(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const statuses = await ctx.cluster.statuses(1_000);
  const standbys = [...statuses.values()].filter(
    (s): s is ReplicaStatus => s !== null && s.role === 'standby' && !ctx.busy.has(s.id) && !ctx.cluster.paused.has(s.id),
  );
  if (standbys.length === 0) {
    record.skipped = 'no standby answered';
    return;
  }
  const id = ctx.random.pick(standbys).id;
  ctx.busy.add(id);
  record.target = id;
  record.at = Date.now();
  if ((await ctx.cluster.replica(id).terminate(5_000)) === null) throw new Error(`${id} did not exit after SIGTERM and SIGKILL`);
  ctx.cluster.startReplica(id);
  await awaitAnswer(ctx, id);
}

/**
 * A replica whose wall clock is an hour ahead (faketime) becomes the leader: a standby is
 * restarted under faketime, the other standby paused and the leader killed, so the fast one takes
 * over; it leads for `fastLeadMs` (its stamps land in the log), then comes back with a true clock.
 * The drill then checks that no stamp ran ahead of the drill's own clock (drillClock.ts).
 */
async function fastClock(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const statuses = [...(await ctx.cluster.statuses(1_000)).values()].filter((s): s is ReplicaStatus => s !== null);
  const leader = statuses.find((s) => s.role === 'leader');
  const standbys = statuses.filter((s) => s.role === 'standby' && !ctx.busy.has(s.id) && !ctx.cluster.paused.has(s.id));
  if (leader === undefined || ctx.busy.has(leader.id) || standbys.length < 2) {
    record.skipped = 'needs a free leader and two free standbys';
    return;
  }
  const fast = ctx.random.pick(standbys).id;
  const other = standbys.find((s) => s.id !== fast)?.id as string;
  for (const id of [fast, other, leader.id]) ctx.busy.add(id);
  record.target = fast;
  record.at = Date.now();
  const window = { replica: fast, aheadMs: ctx.opts.clockAheadMs, from: Date.now(), to: 0, led: false, toSeq: 0, killed: leader.id, killedAt: 0 };
  record.fastClock = window;
  try {
    if ((await ctx.cluster.replica(fast).terminate(5_000)) === null) throw new Error(`${fast} did not exit after SIGTERM and SIGKILL`);
    window.from = Date.now();
    ctx.cluster.startReplica(fast, ctx.opts.clockAheadMs);
    await awaitAnswer(ctx, fast);
    // only the fast replica may take over: the other standby sleeps through the kill
    const otherProc = ctx.cluster.replica(other);
    otherProc.signal('SIGSTOP');
    ctx.cluster.paused.add(other);
    try {
      window.killedAt = Date.now();
      if ((await ctx.cluster.replica(leader.id).kill()) === null) throw new Error(`${leader.id} did not die after SIGKILL`);
      const next = await ctx.cluster.leader(15_000, leader.id);
      record.nextLeader = next?.id ?? null;
      window.led = next?.id === fast;
    } finally {
      otherProc.signal('SIGCONT');
      ctx.cluster.paused.delete(other);
    }
    ctx.cluster.startReplica(leader.id);
    await awaitAnswer(ctx, leader.id);
    if (window.led) await sleep(ctx.opts.fastLeadMs);
  } finally {
    // back with a true clock; its stamps are all in the log by the time it has exited
    await ctx.cluster.replica(fast).terminate(5_000);
    window.to = Date.now();
    // every transaction up to here was written before `to`, by whoever led
    window.toSeq = await lastLogSequence(ctx.cluster.bus).catch(() => 0);
    ctx.cluster.startReplica(fast);
    ctx.busy.delete(other);
    ctx.busy.delete(leader.id);
  }
  await awaitAnswer(ctx, fast);
  if (!window.led) throw new Error(`${fast} (clock ${ctx.opts.clockAheadMs} ms ahead) did not take over; ${record.nextLeader ?? 'nobody'} did`);
}
