import { sleep } from '../drillSleep.ts';
import { currentLeader } from '../drillTargets.ts';
import { awaitAnswer } from './awaitAnswer.ts';
import type { DrillFault } from './drillFault.ts';
import { targetHit } from './targetHit.ts';

/** SIGSTOP of the leader for `pauseMs` (longer than the lease), then SIGCONT. */
export const pauseLeader: DrillFault<'pause-leader'> = {
  kind: 'pause-leader',
  help: 'SIGSTOP of the leader for longer than the lease, then SIGCONT',
  needs: null,
  inDefault: true,
  natsNode: false,
  leaderHit: targetHit,
  async inject(record, ctx) {
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
  },
};
