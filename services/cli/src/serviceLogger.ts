import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { CliError, EXIT } from './cliError.ts';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The pino logger of a service the command line runs: `--log-level`, then `LOG_LEVEL`, then `info`. */
export function serviceLogger(level: string | undefined, destination?: DestinationStream): Logger {
  const chosen = level ?? process.env.LOG_LEVEL ?? 'info';
  if (!LEVELS.includes(chosen)) {
    throw new CliError(EXIT.usage, 'bad-log-level', `unknown log level ${JSON.stringify(chosen)} (one of ${LEVELS.join(', ')})`);
  }
  return destination === undefined ? pino({ level: chosen }) : pino({ level: chosen }, destination);
}
