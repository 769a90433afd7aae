/** Stable codes of the errors this package raises. */
export type BusErrorCode =
  | 'CHAIN_BROKEN'
  | 'LOG_GAP'
  | 'BAD_MESSAGE'
  | 'TRANSACTION_TOO_LARGE'
  | 'UNSAFE_STREAM_UPDATE'
  | 'STREAM_NOT_PLACED'
  | 'BAD_DEFINITION'
  | 'SNAPSHOT_UNREADABLE'
  | 'SNAPSHOT_TIMEOUT'
  | 'READ_SHORT'
  | 'READ_STALLED';

/** An error of the bus with a stable `code`, the stream sequence it concerns (if any) and a `cause`. */
export class BusError extends Error {
  readonly code: BusErrorCode;
  readonly seq: number | undefined;

  constructor(code: BusErrorCode, message: string, opts: { seq?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'BusError';
    this.code = code;
    this.seq = opts.seq;
  }
}

/** Whether `err` is a bus error, optionally with the given code (works across package copies). */
export function isBusError(err: unknown, code?: BusErrorCode): err is BusError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === 'BusError' && typeof e.code === 'string' && (code === undefined || e.code === code);
}

/** Whether `err` says the log's hash chain is broken (a `prev` that does not match, or a gap). */
export function isChainBroken(err: unknown): err is BusError {
  return isBusError(err, 'CHAIN_BROKEN') || isBusError(err, 'LOG_GAP');
}
