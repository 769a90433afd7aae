import { lastLogSequence } from '@muster/bus';
import { libfaketime } from '../drillCluster.ts';
import type { ReplicaStatus } from '../drillCluster.ts';
import { sleep } from '../drillSleep.ts';
import { awaitAnswer } from './awaitAnswer.ts';
import type { DrillFault } from './drillFault.ts';

/**
 * A replica whose wall clock is an hour ahead (faketime) becomes the leader: a standby is
 * restarted under faketime, the other standby paused and the leader killed, so the fast one takes
 * over; it leads for `fastLeadMs` (its stamps land in the log), then comes back with a true clock.
 * The drill then checks that no stamp ran ahead of the drill's own clock (drillClock.ts).
 */
export const fastClock: DrillFault<'fast-clock'> = {
  kind: 'fast-clock',
  help: 'a standby restarted with its wall clock an hour ahead takes over from a killed leader, leads a while, then comes back with a true clock',
  needs: 'faketime',
  inDefault: true,
  natsNode: false,
  unavailable: () => (libfaketime() === null ? 'libfaketime is not installed (apt-get install -y faketime)' : null),
  // the leader is killed so that the fast standby takes over: a takeover from that kill
  leaderHit: (record) => (record.skipped === null && record.target !== null && record.fastClock !== undefined && record.fastClock.killedAt > 0 ? { from: record.fastClock.killed, at: record.fastClock.killedAt } : null),
  async inject(record, ctx) {
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
  },
};
