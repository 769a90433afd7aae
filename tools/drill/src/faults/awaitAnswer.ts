import type { FaultContext } from '../drillFaultRecord.ts';
import { sleep } from '../drillSleep.ts';

/** Waits until a restarted replica answers its status as rebuilt (no longer 'starting': it stands by or leads). */
export async function awaitAnswer(ctx: FaultContext, id: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await ctx.cluster.status(id, 500);
    if (status !== null && status.role !== 'starting') return;
    await sleep(200);
  }
  throw new Error(`${id} did not answer its status as rebuilt within ${timeoutMs} ms of its restart`);
}
