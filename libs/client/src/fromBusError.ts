import { isConnectionClosed, isNoResponders, isPermissionDenied, isStreamNotFound, isTimeout } from '@muster/bus';
import { MusterError } from './musterError.ts';

/** Turns an error of the bus into a `MusterError` with a stable code; `what` names the attempted operation. */
export function fromBusError(err: unknown, what: string): MusterError {
  if (err instanceof MusterError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (isTimeout(err)) {
    return new MusterError('timeout', `${what}: no answer in time (the outcome is unknown)`, { cause: err });
  }
  if (isNoResponders(err)) {
    return new MusterError('unavailable', `${what}: no muster service answers (is a scheduler running?)`, { cause: err });
  }
  if (isStreamNotFound(err)) {
    return new MusterError('unavailable', `${what}: the muster streams do not exist yet (start a scheduler first)`, { cause: err });
  }
  if (isPermissionDenied(err)) {
    return new MusterError('forbidden', `${what}: permission denied on ${err.subject}`, { cause: err });
  }
  if (isConnectionClosed(err)) {
    return new MusterError('unavailable', `${what}: the NATS connection is closed`, { cause: err });
  }
  return new MusterError('unavailable', `${what}: ${message}`, { cause: err });
}
