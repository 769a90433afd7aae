import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { DrillOptions, DrillSchedule, FaultKind } from '@muster/drill';
import { SCHEDULER_FLAGS, parseFlag } from '@muster/scheduler/flags';
import { CliError, EXIT } from '../cliError.ts';
import { positiveInt } from '../natsOptions.ts';
import { untilStopped } from '../untilStopped.ts';

interface DrillFlags {
  duration?: number;
  schedule?: DrillSchedule;
  faultEvery?: number;
  seed?: number;
  faults?: FaultKind[];
  rate?: number;
  nodes?: number;
  leaseMs?: number;
  json?: boolean;
  keepLogs?: string;
}

/**
 * `muster drill`: an HA drill on loopback (three NATS nodes, three scheduler replica processes,
 * simulated agents, a workload under faults), then the checks; exit 0 only when every one passes.
 */
export function drillCommand(): Command {
  return new Command('drill')
    .description('run an HA drill on loopback: 3 NATS nodes, 3 scheduler replicas, simulated agents and a workload under faults (`muster drill --faults list` names each kind and what it does); exit 0 only when the verdict is PASS: nothing lost, duplicated, contradicted, overcommitted or divergent, no work waited, and the cluster came to rest (SATURATED: sound, but still working through a backlog)')
    .option('--duration <s>', 'seconds of workload under faults (default 120)', positiveNumber)
    .option('--schedule <kind>', 'sequential (one fault at a time, recovery between) or chaotic (random faults from a seeded PRNG)', schedule)
    .option('--fault-every <s>', 'sequential: seconds of quiet between faults; chaotic: mean seconds between faults (default 8)', positiveNumber)
    .option('--seed <n>', 'seed of the workload and the fault schedule (default 1)', integer)
    .option('--faults <list>', 'comma-separated fault kinds (default: every kind but partition-nats; a kind this machine cannot inject is skipped and the report says why); `--faults list` prints each kind, what it needs and whether it is in the default set', faultList)
    .option('--rate <n>', 'gang submissions per second (default 4)', positiveInt)
    .option('--nodes <n>', 'simulated nodes (default: scaled from --rate so the offered load is about 65% of capacity)', positiveInt)
    .option('--lease-ms <ms>', `the replicas' lease: ${LEASE.description} (default ${LEASE.default}, as a replica's; shorter than the drill's 2,500 ms pause and 3,000 ms partition)`, leaseMs)
    .option('--json', 'print the report as JSON')
    .option('--keep-logs <dir>', 'keep every log (NATS nodes, replicas, agents) under this folder')
    .action(async (flags: DrillFlags) => {
      const { drillTable, faultsHelp, resolveDrillOptions, runDrill } = await import('@muster/drill');
      if (flags.faults?.length === 1 && flags.faults[0] === ('list' as FaultKind)) {
        process.stdout.write(`${faultsHelp()}\n`);
        return;
      }
      const partial: Partial<DrillOptions> = {
        durationS: flags.duration,
        schedule: flags.schedule,
        faultEveryS: flags.faultEvery,
        seed: flags.seed,
        faults: flags.faults,
        rate: flags.rate,
        nodes: flags.nodes,
        leaseMs: flags.leaseMs,
        keepLogsDir: flags.keepLogs === undefined ? undefined : resolve(flags.keepLogs),
      };
      try {
        resolveDrillOptions(partial);
      } catch (err) {
        throw new CliError(EXIT.usage, 'usage', (err as Error).message);
      }
      // Ctrl-C ends the workload and the faults early; the drill still stops everything and reports
      const interrupt = new AbortController();
      const finished = new AbortController();
      const stopped = untilStopped(finished.signal).then((why) => {
        if (why !== 'done') interrupt.abort();
      });
      const report = await runDrill(partial, { progress: (line) => process.stderr.write(`${line}\n`), signal: interrupt.signal });
      finished.abort();
      await stopped;
      process.stdout.write(flags.json === true ? `${JSON.stringify(report, null, 2)}\n` : `${drillTable(report)}\n`);
      if (report.logsDir !== null) process.stderr.write(`logs kept in ${report.logsDir}\n`);
      if (!report.ok) {
        const more = report.failures.length > 1 ? ` (and ${report.failures.length - 1} more)` : '';
        // SATURATED has no failure to name: it says what kept the run from passing
        const why = report.failures[0] ?? (report.verdict === 'saturated' ? `saturated: ${report.notes[0] ?? 'still working through a backlog'}` : 'unknown');
        throw new CliError(EXIT.negative, 'drill-failed', `drill ${report.verdict === 'saturated' ? 'did not pass' : 'failed'}: ${why}${more}`);
      }
    });
}

// the replica's own row of its flags table: what the lease is, its default, and how its value is read
const LEASE = SCHEDULER_FLAGS.find((f) => f.option === 'leaseMs') as (typeof SCHEDULER_FLAGS)[number];

function leaseMs(value: string): number {
  const n = parseFlag(LEASE, value);
  if (n instanceof Error) throw new InvalidArgumentError(n.message);
  return n as number;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('must be an integer');
  return n;
}

function schedule(value: string): DrillSchedule {
  if (value !== 'sequential' && value !== 'chaotic') throw new InvalidArgumentError('must be sequential or chaotic');
  return value;
}

// the kinds themselves are checked with the other options, by the drill's own resolveDrillOptions
function faultList(value: string): FaultKind[] {
  const kinds = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (kinds.length === 0) throw new InvalidArgumentError('must name at least one fault');
  return kinds as FaultKind[];
}
