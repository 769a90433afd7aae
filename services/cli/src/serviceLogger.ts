import type { Logger } from 'pino';
import { CliError, EXIT } from './cliError.ts';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * The pino logger of a service the command line runs: `--log-level`, then `LOG_LEVEL`, then `info`;
 * to stdout, or appended synchronously to `logFile` (nothing to flush when stopping). pino is loaded
 * here, when a service starts, so that `--help` and the clients never load it.
 */
export async function serviceLogger(level: string | undefined, logFile?: string): Promise<Logger> {
  const chosen = level ?? process.env.LOG_LEVEL ?? 'info';
  if (!LEVELS.includes(chosen)) {
    throw new CliError(EXIT.usage, 'bad-log-level', `unknown log level ${JSON.stringify(chosen)} (one of ${LEVELS.join(', ')})`);
  }
  const { default: pino } = await import('pino');
  return logFile === undefined ? pino({ level: chosen }) : pino({ level: chosen }, pino.destination({ dest: logFile, append: true, sync: true }));
}
