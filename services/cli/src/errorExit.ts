import { CommanderError } from 'commander';
import { EXIT, isCliError } from './cliError.ts';
import type { ExitCode } from './cliError.ts';

/** What to print and how to exit for an error that reached the top of the command line. */
export interface ErrorExit {
  /** One line for stderr, or null when nothing more needs saying (help was shown). */
  line: string | null;
  exitCode: ExitCode;
}

const MUSTER_ERROR_EXITS: Readonly<Record<string, ExitCode>> = {
  invalid: EXIT.usage,
  unavailable: EXIT.unreachable,
  timeout: EXIT.unreachable,
  'bad-reply': EXIT.unreachable,
};

/** Turns any error into one line and an exit code; never a stack trace (MUSTER_DEBUG=1 adds it). */
export function errorExit(err: unknown): ErrorExit {
  if (err instanceof CommanderError) {
    // help and version are shown by commander itself and are not errors
    if (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version') {
      return { line: null, exitCode: EXIT.ok };
    }
    if (err.code === 'commander.help') return { line: null, exitCode: EXIT.usage };
    return { line: oneLine(err.message.replace(/^error:\s*/, '')), exitCode: EXIT.usage };
  }
  // an empty message: the command already said everything on stdout
  if (isCliError(err)) return { line: err.message === '' ? null : oneLine(err.message), exitCode: err.exitCode };
  // the SDK's errors, by name: importing the SDK here would slow every start of the command
  if (isNamedError(err, 'MusterError')) {
    const code = (err as Error & { code?: unknown }).code;
    return { line: oneLine(err.message), exitCode: (typeof code === 'string' ? MUSTER_ERROR_EXITS[code] : undefined) ?? EXIT.negative };
  }
  // the agent's own errors (a NodeSpec that does not validate, an unreadable state file) are input errors
  if (isNamedError(err, 'AgentError')) return { line: oneLine(err.message), exitCode: EXIT.usage };
  const message = err instanceof Error ? err.message : String(err);
  return { line: `internal error: ${oneLine(message)}`, exitCode: EXIT.negative };
}

/** Collapses a message onto one line. */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

function isNamedError(err: unknown, name: string): err is Error {
  return err instanceof Error && err.name === name;
}
