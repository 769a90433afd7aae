import { Command } from 'commander';
import type { startScheduler } from '@muster/scheduler';
import { SCHEDULER_FLAGS, flagHelp, flagValues } from '@muster/scheduler/flags';
import type { FlagValues } from '@muster/scheduler/flags';
import { CliError, EXIT } from '../cliError.ts';
import { natsTarget, nonNegativeInt, positiveInt, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { serviceLogger } from '../serviceLogger.ts';
import { untilStopped } from '../untilStopped.ts';

type SchedulerFlags = NatsFlags & FlagValues & {
  id?: string;
  logLevel?: string;
};

const PARSERS = { positive: positiveInt, 'non-negative': nonNegativeInt } as const;

/** `muster scheduler [--id ID]`: one scheduler replica (leader or standby) until Ctrl-C. */
export function schedulerCommand(): Command {
  const command = withNatsOptions(new Command('scheduler'))
    .description('run one scheduler replica (it leads or stands by) until interrupted; logs are JSON (pino)')
    .option('--id <id>', 'replica id, distinct per replica (default: $MUSTER_ID or s-<pid>)');
  // the tunables, from the replica's one table (flag, environment variable, default, description)
  for (const f of SCHEDULER_FLAGS) {
    if (f.kind === 'text') command.option(`--${f.flag} <value>`, flagHelp(f));
    else command.option(`--${f.flag} <n>`, flagHelp(f), PARSERS[f.kind]);
  }
  return command
    .option('--log-level <level>', 'pino log level (default: $LOG_LEVEL or info)')
    .action(async (flags: SchedulerFlags) => {
      const logger = await serviceLogger(flags.logLevel);
      const target = natsTarget(flags);
      const fromEnv = flagValues({}, process.env);
      if (fromEnv instanceof Error) throw new CliError(EXIT.usage, 'bad-flag', fromEnv.message);
      const tuning: Record<string, unknown> = { ...fromEnv };
      for (const f of SCHEDULER_FLAGS) if (flags[f.option] !== undefined) tuning[f.option] = flags[f.option];
      // loaded here, so the other subcommands start fast and do not depend on the scheduler's code
      const { startScheduler: start } = await import('@muster/scheduler');
      // Ctrl-C while starting still ends in a clean stop once started
      const stopRequested = untilStopped();
      let handle: Awaited<ReturnType<typeof startScheduler>>;
      try {
        handle = await start({
          natsUrl: target.servers,
          id: flags.id ?? process.env.MUSTER_ID ?? `s-${process.pid}`,
          logger,
          ...(target.auth.user === undefined ? {} : { user: target.auth.user, pass: target.auth.pass ?? '' }),
          ...tuning,
        });
      } catch (err) {
        throw new CliError(EXIT.unreachable, 'unreachable', `scheduler could not start on ${target.servers.join(',')}: ${(err as Error).message}`, { cause: err });
      }
      await stopRequested;
      await handle.stop();
    });
}
