import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { ClosedConnectionError, NoRespondersError, PermissionViolationError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { MusterError } from './musterError.ts';

/** Turns an error of nats.js into a `MusterError` with a stable code; `what` names the attempted operation. */
export function fromNatsError(err: unknown, what: string): MusterError {
  if (err instanceof MusterError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError)) {
    return new MusterError('timeout', `${what}: no answer in time (the outcome is unknown)`, { cause: err });
  }
  if (err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders())) {
    return new MusterError('unavailable', `${what}: no muster service answers (is a scheduler running?)`, { cause: err });
  }
  if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) {
    return new MusterError('unavailable', `${what}: the muster streams do not exist yet (start a scheduler first)`, { cause: err });
  }
  if (err instanceof PermissionViolationError) {
    return new MusterError('forbidden', `${what}: permission denied on ${err.subject}`, { cause: err });
  }
  if (err instanceof ClosedConnectionError) {
    return new MusterError('unavailable', `${what}: the NATS connection is closed`, { cause: err });
  }
  return new MusterError('unavailable', `${what}: ${message}`, { cause: err });
}
