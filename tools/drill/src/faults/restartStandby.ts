import type { ReplicaStatus } from '../drillCluster.ts';
import { awaitAnswer } from './awaitAnswer.ts';
import type { DrillFault } from './drillFault.ts';

/** SIGTERM (then SIGKILL) of a standby, restarted at once. */
export const restartStandby: DrillFault<'restart-standby'> = {
  kind: 'restart-standby',
  help: 'SIGTERM of a standby, restarted at once',
  needs: null,
  inDefault: true,
  natsNode: false,
  async inject(record, ctx) {
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
  },
};
