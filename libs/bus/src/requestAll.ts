import type { Bus, BusMessage } from './bus.ts';
import { messageOf, natsOf } from './natsBus.ts';

/**
 * Sends one request and gathers every reply that arrives within `waitMs` (a broadcast such as
 * `muster.replica.status`, which each replica answers); resolves with none when nobody answers.
 */
export async function requestAll(bus: Bus, subject: string, body: string | Uint8Array, opts: { waitMs: number }): Promise<BusMessage[]> {
  const replies: BusMessage[] = [];
  try {
    const messages = await natsOf(bus).nc.requestMany(subject, body, { strategy: 'timer', maxWait: opts.waitMs });
    for await (const msg of messages) replies.push(messageOf(msg));
  } catch (err) {
    // no responders ends the gathering like silence does; anything else is the caller's to see
    if ((err as { code?: unknown }).code !== '503' && !/no responders/i.test(String((err as Error).message))) throw err;
  }
  return replies;
}
