import type { FaultContext } from '../drillFaultRecord.ts';
import { sleep } from '../drillSleep.ts';

/** Waits until a restarted replica answers its status (it has rebuilt and stands by). */
export async function awaitAnswer(ctx: FaultContext, id: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await ctx.cluster.status(id, 500)) !== null) return;
    await sleep(200);
  }
  throw new Error(`${id} did not answer its status within ${timeoutMs} ms of its restart`);
}
