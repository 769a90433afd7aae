import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { RequestError, TimeoutError } from '@nats-io/transport-node';

/**
 * Whether `err` is JetStream's "wrong last sequence" (API codes 10071 and 10164): someone else
 * wrote first, so an expectation-fenced append lost.
 */
export function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** Whether `err` is a request that got no answer in time (or failed by one): its outcome is unknown. */
export function isTimeout(err: unknown): boolean {
  return err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError);
}
