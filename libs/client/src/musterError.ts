/**
 * Stable codes of the errors the SDK raises: the service's rejection categories (`invalid`,
 * `duplicate`, `unknown`, `not-found`), `unavailable` (no scheduler or stream answers), `timeout`
 * (no answer in time, outcome unknown), `forbidden` (NATS permissions) and `bad-reply` (an answer
 * the SDK cannot read).
 */
export type MusterErrorCode =
  | 'invalid'
  | 'duplicate'
  | 'unknown'
  | 'not-found'
  | 'unavailable'
  | 'timeout'
  | 'forbidden'
  | 'bad-reply'
  | (string & Record<never, never>);

/** An error of the muster SDK with a stable `code` and, for a refused input, the offending field `path`. */
export class MusterError extends Error {
  readonly code: MusterErrorCode;
  /** The offending field, dotted (`roles.0.count`); '' when the error is not about one field. */
  readonly path: string;

  constructor(code: MusterErrorCode, message: string, opts: { path?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'MusterError';
    this.code = code;
    this.path = opts.path ?? '';
  }
}

/** Whether `err` is a muster SDK error, optionally with the given code (works across package copies). */
export function isMusterError(err: unknown, code?: MusterErrorCode): err is MusterError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === 'MusterError' && typeof e.code === 'string' && (code === undefined || e.code === code);
}
