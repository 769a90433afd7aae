import type { Bus } from './bus.ts';
import type { StreamAck } from './jetStreamPublisher.ts';
import { natsOf } from './natsBus.ts';
import { subjects } from './subjects.ts';

const OUTPUT_PREFIX = subjects.outputPrefix;

/**
 * Stores one batch of a member's output on its `muster.out.<nodeId>.<jobId>.<member>` subject in
 * MUSTER_OUTPUT (no msg id: a batch is sent once, and one lost is output lost, never a duplicate).
 */
export function publishOutput(bus: Bus, subject: string, payload: Uint8Array, opts: { timeoutMs?: number } = {}): Promise<StreamAck> {
  if (!subject.startsWith(OUTPUT_PREFIX)) return Promise.reject(new RangeError(`output subject must start with ${OUTPUT_PREFIX}, got ${subject}`));
  return natsOf(bus).js.publish(subject, payload, opts.timeoutMs === undefined ? {} : { timeout: opts.timeoutMs });
}
