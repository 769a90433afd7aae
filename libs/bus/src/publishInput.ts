import type { Bus } from './bus.ts';
import type { StreamAck } from './jetStreamPublisher.ts';
import { natsOf } from './natsBus.ts';
import { subjects } from './subjects.ts';

/**
 * Publishes one input on a `muster.in.…` subject (objects are sent as JSON, strings as they are),
 * with `msgId` as its `Nats-Msg-Id` so that a repeat inside the dedupe window is dropped.
 */
export function publishInput(bus: Bus, subject: string, body: unknown, msgId?: string): Promise<StreamAck> {
  // any other subject has no stream behind it and would only fail later as "no responders"
  if (!subject.startsWith(subjects.inputPrefix)) {
    return Promise.reject(new RangeError(`input subject must start with muster.in., got ${subject}`));
  }
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return natsOf(bus).js.publish(subject, payload, msgId === undefined ? {} : { msgID: msgId });
}
