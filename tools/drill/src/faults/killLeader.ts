import { currentLeader } from '../drillTargets.ts';
import { awaitAnswer } from './awaitAnswer.ts';
import type { DrillFault } from './drillFault.ts';
import { targetHit } from './targetHit.ts';

/** kill -9 of the leader; it comes back as a new process that rebuilds and stands by. */
export const killLeader: DrillFault<'kill-leader'> = {
  kind: 'kill-leader',
  help: 'kill -9 of the leader, restarted once another replica leads',
  needs: null,
  inDefault: true,
  natsNode: false,
  leaderHit: targetHit,
  async inject(record, ctx) {
    const id = await currentLeader(record, ctx);
    if (id === null) return;
    record.at = Date.now();
    if ((await ctx.cluster.replica(id).kill()) === null) throw new Error(`${id} did not die after SIGKILL`);
    record.nextLeader = (await ctx.cluster.leader(30_000, id))?.id ?? null;
    // the killed replica comes back as a new process, which rebuilds and stands by
    ctx.cluster.startReplica(id);
    await awaitAnswer(ctx, id);
  },
};
