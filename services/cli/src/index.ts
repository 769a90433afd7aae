// @muster/cli: the `muster` command (bin/muster.js runs the built dist/main.js); helpers other commands reuse.
export { CliError, EXIT, isCliError } from './cliError.ts';
export type { ExitCode } from './cliError.ts';
export { errorExit, oneLine } from './errorExit.ts';
export { natsTarget, withClient, withNatsOptions, positiveInt, nonNegativeInt, DEFAULT_NATS_URL } from './natsOptions.ts';
export type { NatsFlags, NatsTarget } from './natsOptions.ts';
export { readJsonFile, readUserFile } from './readJsonFile.ts';
export { serviceLogger } from './serviceLogger.ts';
export { renderTable } from './format.ts';
