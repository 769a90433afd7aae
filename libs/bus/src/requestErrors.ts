// What a failed request, publish or JetStream call was, for callers that turn bus errors into
// their own (the client's MusterError); the fence's predicates are in isWrongLastSequence.ts.
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { ClosedConnectionError, NoRespondersError, PermissionViolationError, RequestError } from '@nats-io/transport-node';

/** A permissions violation: the server refused this connection a subject. */
export interface PermissionDenied extends Error {
  /** The subject refused. */
  subject: string;
}

/** Whether `err` is a request (or JetStream publish) that nobody serves: no service, or no stream on the subject. */
export function isNoResponders(err: unknown): boolean {
  return err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders());
}

/** Whether `err` is JetStream's "stream not found". */
export function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
}

/** Whether `err` is a permissions violation (a publish or subscription the server refused). */
export function isPermissionDenied(err: unknown): err is PermissionDenied {
  return err instanceof PermissionViolationError;
}

/** Whether `err` is an operation on a connection that is closed. */
export function isConnectionClosed(err: unknown): boolean {
  return err instanceof ClosedConnectionError;
}
