/** Exit codes scripts can rely on. */
export const EXIT = {
  ok: 0,
  /** A negative outcome: a rejected job, a final abort, a job that is not known. */
  negative: 1,
  /** A usage or input error: unknown flag, unreadable file, invalid JobSpec. */
  usage: 2,
  /** NATS or the muster service cannot be reached. */
  unreachable: 3,
} as const;

/** An exit code of `muster`. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the command line reports as one line on stderr and turns into its exit code. */
export class CliError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode, code: string, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'CliError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** Whether `err` is a command-line error (works across package copies). */
export function isCliError(err: unknown): err is CliError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; exitCode?: unknown };
  return e.name === 'CliError' && typeof e.exitCode === 'number';
}
