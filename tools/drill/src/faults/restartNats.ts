import { sleep } from '../drillSleep.ts';
import { pickNatsNode, recoverStalledNode, restartNatsNode } from '../drillTargets.ts';
import type { DrillFault } from './drillFault.ts';

/** kill -9 of one NATS node, restarted on its store after `natsDownMs`. */
export const restartNats: DrillFault<'restart-nats'> = {
  kind: 'restart-nats',
  help: 'kill -9 of one NATS node, restarted on its store a few seconds later',
  needs: null,
  inDefault: true,
  natsNode: true,
  async inject(record, ctx) {
    const node = pickNatsNode(record, ctx);
    if (node === null) return;
    record.at = Date.now();
    await node.kill('SIGKILL');
    await sleep(ctx.opts.natsDownMs);
    await restartNatsNode(node);
    await recoverStalledNode('restart-nats', node, record, ctx);
  },
};
