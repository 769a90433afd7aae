/** Stable codes of the auditor's own errors (a failed audit is a report, not an error). */
export type AuditorErrorCode = 'bad-range' | 'beyond-log' | 'bad-history';

/** An error of the auditor's inputs: a range it cannot audit, a sequence past the log, an unreadable history. */
export class AuditorError extends Error {
  readonly code: AuditorErrorCode;

  constructor(code: AuditorErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AuditorError';
    this.code = code;
  }
}

/** Whether `err` is an auditor error (works across package copies). */
export function isAuditorError(err: unknown): err is AuditorError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return e.name === 'AuditorError' && typeof e.code === 'string';
}
