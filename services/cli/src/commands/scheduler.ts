import { Command } from 'commander';
import type { startScheduler } from '@muster/scheduler';
import { CliError, EXIT } from '../cliError.ts';
import { natsTarget, nonNegativeInt, positiveInt, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { serviceLogger } from '../serviceLogger.ts';
import { untilStopped } from '../untilStopped.ts';

interface SchedulerFlags extends NatsFlags {
  id?: string;
  replicas?: number;
  leaseMs?: number;
  heartbeatTimeoutMs?: number;
  checkpointEvery?: number;
  snapshotEvery?: number;
  snapshotEveryEvents?: number;
  retainFinishedMs?: number;
  maxBatchInputs?: number;
  metricsPort?: number;
  metricsHost?: string;
  logLevel?: string;
}

/** `muster scheduler [--id ID]`: one scheduler replica (leader or standby) until Ctrl-C. */
export function schedulerCommand(): Command {
  return withNatsOptions(new Command('scheduler'))
    .description('run one scheduler replica (it leads or stands by) until interrupted; logs are JSON (pino)')
    .option('--id <id>', 'replica id, distinct per replica (default: $MUSTER_ID or s-<pid>)')
    .option('--replicas <n>', 'stream replicas: 1 on one server, 3 on a cluster', positiveInt)
    .option('--lease-ms <ms>', 'take over after this long without a lease refresh', positiveInt)
    .option('--heartbeat-timeout-ms <ms>', 'mark a node lost after this long without heartbeats (0: never)', nonNegativeInt)
    .option('--checkpoint-every <n>', 'a Checkpoint every n transactions', positiveInt)
    .option('--snapshot-every <n>', 'a snapshot every n transactions (0: none)', nonNegativeInt)
    .option('--snapshot-every-events <n>', 'also a snapshot once n events were folded since the last (default 50000; 0: by transactions only)', nonNegativeInt)
    .option('--retain-finished-ms <ms>', 'keep a finished job in the state this long, then retire it (default 300000)', nonNegativeInt)
    .option('--max-batch-inputs <n>', 'at most n buffered inputs ingested in one turn, before its session (default 1024)', positiveInt)
    .option('--metrics-port <port>', 'serve Prometheus metrics on GET /metrics at this port (0, the default: none)', nonNegativeInt)
    .option('--metrics-host <host>', 'the address the metrics endpoint binds (default 127.0.0.1; 0.0.0.0 for a scraper on another machine)')
    .option('--log-level <level>', 'pino log level (default: $LOG_LEVEL or info)')
    .action(async (flags: SchedulerFlags) => {
      const logger = await serviceLogger(flags.logLevel);
      const target = natsTarget(flags);
      const tuning = {
        replicas: flags.replicas,
        leaseMs: flags.leaseMs,
        heartbeatTimeoutMs: flags.heartbeatTimeoutMs,
        checkpointEvery: flags.checkpointEvery,
        snapshotEvery: flags.snapshotEvery,
        snapshotEveryEvents: flags.snapshotEveryEvents,
        retainFinishedMs: flags.retainFinishedMs,
        maxBatchInputs: flags.maxBatchInputs,
        metricsPort: flags.metricsPort,
        metricsHost: flags.metricsHost,
      };
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
          ...Object.fromEntries(Object.entries(tuning).filter(([, v]) => v !== undefined)),
        });
      } catch (err) {
        throw new CliError(EXIT.unreachable, 'unreachable', `scheduler could not start on ${target.servers.join(',')}: ${(err as Error).message}`, { cause: err });
      }
      await stopRequested;
      await handle.stop();
    });
}
