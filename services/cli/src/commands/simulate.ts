import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Bus } from '@muster/bus';
import type { RecordedWorkload, State, SwfOptions } from '@muster/core';
import { tightenHeapGrowth } from '../batchHeap.ts';
import { CliError, EXIT } from '../cliError.ts';
import { oneLine } from '../errorExit.ts';
import { natsTarget, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { readUserFile } from '../readJsonFile.ts';
import { LineWriter } from '../lineWriter.ts';
import { OutputClosed, writeStdoutSync } from '../stdoutSync.ts';

interface SimulateFlags extends NatsFlags {
  fromLog?: boolean;
  policy?: string;
  saveWorkload?: string;
  swf?: string;
  hosts?: string;
  slotsPerHost?: string;
  estimate?: string;
  limit?: string;
}

/**
 * `muster simulate SCENARIO`: the offline what-if run of DESIGN.md §8 and §11, no NATS involved;
 * with `--from-log`, the workload taken from a live log (arrivals and observed run times), re-run
 * offline under the policy of `--policy`.
 */
export function simulateCommand(): Command {
  return withNatsOptions(new Command('simulate'))
    .description('run a scenario (steps or a workload) through the scheduler core offline and print every decision as a JSON line, then (for a workload) per-job stats, then a summary')
    .argument('[scenario]', 'scenario JSON file (- reads standard input)')
    .option('--from-log', "take the workload from MUSTER_LOG on --nats (its nodes, arrivals and observed run times) instead of a file")
    .option('--save-workload <file>', 'with --from-log: also write the workload taken from the log as a scenario file, to re-run offline')
    .option('--policy <file|json>', 'a PolicySpec (a file, or JSON such as \'{"reserveDepth":0}\') applied after the scenario\'s own policy')
    .option('--swf <file>', 'take the workload from a Standard Workload Format trace (a job of P processors: a gang of P one-slot members)')
    .option('--hosts <n>', "with --swf: hosts of the simulated cluster (default: the trace header's MaxProcs over --slots-per-host)")
    .option('--slots-per-host <k>', 'with --swf: slots (processors) of each host', '1')
    .option('--estimate <which>', "with --swf: a job's runtime limit is its actual run time or its requested time, plus 1 s (actual|requested)", 'actual')
    .option('--limit <n>', 'with --swf: only the first N jobs of the trace')
    .action(async (file: string | undefined, flags: SimulateFlags) => {
      const sources = [file !== undefined, flags.fromLog === true, flags.swf !== undefined].filter(Boolean).length;
      if (sources > 1) throw new CliError(EXIT.usage, 'usage', 'give one of a scenario file, --from-log or --swf, not both');
      if (sources === 0) throw new CliError(EXIT.usage, 'usage', 'give a scenario file, --from-log to take the workload from a live log, or --swf to take it from a trace');
      if (flags.saveWorkload !== undefined && flags.fromLog !== true) throw new CliError(EXIT.usage, 'usage', '--save-workload writes the workload of --from-log');
      if (flags.swf === undefined && (flags.hosts !== undefined || flags.limit !== undefined)) throw new CliError(EXIT.usage, 'usage', '--hosts and --limit shape the workload of --swf');
      const { runScenario, runScenarioText, swfWorkload, validatePolicySpec } = await import('@muster/core');
      // a long what-if allocates fast and keeps little: collect before the heap grows four times over
      tightenHeapGrowth();
      const policy = flags.policy === undefined ? undefined : readPolicy(flags.policy);
      // checked before anything is read: a policy the core would refuse is a usage error
      const valid = policy === undefined ? null : validatePolicySpec(policy);
      if (valid !== null && !valid.ok) throw new CliError(EXIT.usage, 'bad-policy', `the policy given on the command line: ${valid.error.message}`);
      // the command prints decisions only: the transactions written are not kept; hashes (job
      // fingerprints, the Summary's stateHash) by Node's SHA-256, the same values as the core's
      const { payloadHash, nativeStateHash } = await import('@muster/bus');
      const { ByteScratch } = await import('@muster/core');
      const hashes = { digest: payloadHash, stateHash: (state: State) => nativeStateHash(state, new ByteScratch()) };
      // lines are written as the run makes them, in chunks, at once (waiting while a pipe is full):
      // a long run holds none of its output
      const out = new LineWriter(writeStdoutSync);
      const options = { transactions: false, hashes, onLine: (line: string) => out.line(line), ...(policy === undefined ? {} : { policy }) };
      try {
        let result;
        let what: string;
        if (file !== undefined) {
          what = file;
          result = runScenarioText(readUserFile(file), options);
        } else if (flags.swf !== undefined) {
          what = flags.swf;
          const trace = swfWorkload(readUserFile(flags.swf), swfOptions(flags));
          if (!trace.ok) throw new CliError(EXIT.usage, 'bad-trace', `${what}: ${trace.error}`);
          for (const note of trace.notes) process.stderr.write(`muster: note: ${note}\n`);
          result = runScenario(trace.scenario, options);
        } else {
          const recorded = await workloadFromLog(flags);
          for (const note of recorded.notes) process.stderr.write(`muster: note: ${note}\n`);
          if (flags.saveWorkload !== undefined) saveWorkload(flags.saveWorkload, recorded);
          what = 'the workload from the log';
          result = runScenario(recorded.scenario, options);
        }
        if (!result.ok) throw new CliError(EXIT.usage, 'bad-scenario', `${what}: ${result.error}`);
        out.flush();
      } catch (err) {
        // the reader went away (`| head`): it has what it wanted
        if (!(err instanceof OutputClosed)) throw err;
      }
    });
}

/** The options of `--swf` from its flags; a count that is not a positive integer, or an unknown estimate, is a usage error. */
function swfOptions(flags: SimulateFlags): SwfOptions {
  const count = (name: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new CliError(EXIT.usage, 'usage', `${name}: must be an integer ≥ 1, got ${JSON.stringify(value)}`);
    return n;
  };
  const estimate = flags.estimate ?? 'actual';
  if (estimate !== 'actual' && estimate !== 'requested') throw new CliError(EXIT.usage, 'usage', `--estimate: must be actual or requested, got ${JSON.stringify(estimate)}`);
  const hosts = count('--hosts', flags.hosts);
  const limit = count('--limit', flags.limit);
  return { slotsPerHost: count('--slots-per-host', flags.slotsPerHost) ?? 1, estimate, ...(hosts === undefined ? {} : { hosts }), ...(limit === undefined ? {} : { limit }) };
}

/** The PolicySpec of `--policy`: JSON given inline (it starts with `{`), or the JSON of a file; checked by the core's validation. */
function readPolicy(value: string): unknown {
  const inline = value.trimStart().startsWith('{');
  const text = inline ? value : readUserFile(value);
  let policy: unknown;
  try {
    policy = JSON.parse(text);
  } catch (err) {
    throw new CliError(EXIT.usage, 'bad-policy', `--policy ${inline ? 'is' : `${value} is`} not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  return policy;
}

/** Writes the workload taken from the log as a scenario file (one arrival a line); an unwritable file is a usage error. */
function saveWorkload(path: string, recorded: RecordedWorkload): void {
  const { nodes, policy, workload } = recorded.scenario;
  const list = (items: readonly unknown[]) => (items.length === 0 ? '[]' : `[\n${items.map((item) => `    ${JSON.stringify(item)}`).join(',\n')}\n  ]`);
  const text = `{\n  "nodes": ${list(nodes)},\n${policy === undefined ? '' : `  "policy": ${JSON.stringify(policy)},\n`}  "workload": ${list(workload)}\n}\n`;
  try {
    writeFileSync(path, text);
  } catch (err) {
    throw new CliError(EXIT.usage, 'unwritable-file', `cannot write ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Reads MUSTER_LOG on `--nats` from its start, hash chain checked, into a workload (unreachable: exit 3). */
async function workloadFromLog(flags: SimulateFlags): Promise<RecordedWorkload> {
  const [{ connect, readLog }, { WorkloadRecorder }] = await Promise.all([import('@muster/bus'), import('@muster/core')]);
  const target = natsTarget(flags);
  let bus: Bus;
  try {
    bus = await connect({ servers: target.servers, name: 'muster-simulate', connectTimeoutMs: target.timeoutMs, timeoutMs: target.timeoutMs, maxReconnectAttempts: 3, ...target.auth });
  } catch (err) {
    throw new CliError(EXIT.unreachable, 'unreachable', `cannot reach NATS at ${target.servers.join(',')}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const recorder = new WorkloadRecorder();
    for await (const logged of readLog(bus)) recorder.add(logged);
    return recorder.workload();
  } catch (err) {
    const message = oneLine(err instanceof Error ? err.message : String(err));
    const hint = /stream not found/i.test(message) ? ' (has a muster scheduler ever run on this NATS?)' : '';
    throw new CliError(EXIT.unreachable, 'unreachable', `reading the log on ${target.servers.join(',')} failed: ${message}${hint}`, { cause: err });
  } finally {
    await bus.close().catch(() => undefined);
  }
}
