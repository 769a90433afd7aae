import { Command } from 'commander';
import { MultiBar, Presets } from 'cli-progress';
import type { MusterClient } from '@muster/client';
import type { Decision } from '@muster/core';
import { CliError, EXIT } from '../cliError.ts';
import { decisionLine } from '../format.ts';
import { positiveInt, withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { readJsonFile } from '../readJsonFile.ts';

interface SubmitFlags extends NatsFlags {
  direct?: boolean;
  wait?: boolean;
  waitTimeout?: number;
  json?: boolean;
}

/** `muster submit FILE [--wait] [--json]`: submit one JobSpec or a JSON array of them. */
export function submitCommand(): Command {
  return withNatsOptions(new Command('submit'))
    .description('submit a JobSpec, or a JSON array of them; with --wait, print each decision until every job is placed or aborted')
    .argument('<file>', 'JobSpec JSON file (- reads standard input)')
    .option('--wait', 'wait until each job is placed (or finally aborted), printing every decision')
    .option('--wait-timeout <seconds>', 'with --wait: give up after this many seconds (exit 1)', positiveInt)
    .option('--json', 'print JSON lines (one per submission or decision) instead of text')
    .option('--direct', 'publish straight into MUSTER_IN, even when no scheduler answers (it ingests the job when it runs)')
    .action(async (file: string, flags: SubmitFlags) => {
      const specs = await readSpecs(file);
      await withClient(flags, (client) => submitAll(client, specs, flags));
    });
}

interface Spec {
  id: string;
  body: unknown;
}

// every spec is checked before anything is sent: a bad file submits nothing
async function readSpecs(file: string): Promise<Spec[]> {
  const { validateJobSpec } = await import('@muster/core');
  const content = readJsonFile(file);
  const many = Array.isArray(content);
  const bodies: unknown[] = many ? content : [content];
  if (bodies.length === 0) throw new CliError(EXIT.usage, 'invalid', `${file}: the array holds no JobSpec`);
  const seen = new Set<string>();
  return bodies.map((body, i) => {
    const where = many ? `${file}[${i}]` : file;
    const valid = validateJobSpec(body);
    if (!valid.ok) throw new CliError(EXIT.usage, 'invalid', `${where}: ${valid.error.message}`);
    if (seen.has(valid.value.id)) throw new CliError(EXIT.usage, 'invalid', `${where}: id: job ${valid.value.id} appears twice in the file`);
    seen.add(valid.value.id);
    return { id: valid.value.id, body };
  });
}

async function submitAll(client: MusterClient, specs: Spec[], flags: SubmitFlags): Promise<void> {
  const { isMusterError } = await import('@muster/client');
  const out = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  const failures: string[] = [];
  const accepted: string[] = [];
  for (const spec of specs) {
    try {
      // the API by default, so that "no scheduler is running" is an error now rather than a silent wait
      const { jobId, inputSeq } = await client.submit(spec.body, { via: flags.direct === true ? 'stream' : 'api' });
      accepted.push(jobId);
      out(flags.json === true ? JSON.stringify({ type: 'Submitted', jobId, inputSeq }) : `submitted ${jobId} (input ${inputSeq})`);
    } catch (err) {
      // the service cannot be reached: nothing more will get through
      if (!isMusterError(err) || err.code === 'unavailable' || err.code === 'timeout') throw err;
      failures.push(`${spec.id} rejected (${err.code}: ${err.message})`);
      if (flags.json === true) out(JSON.stringify({ type: 'Rejected', jobId: spec.id, error: { code: err.code, message: err.message, path: err.path } }));
    }
  }
  if (flags.wait === true && accepted.length > 0) failures.push(...(await waitAll(client, accepted, flags, out)));
  if (failures.length === 0) return;
  const summary = failures.length === 1 && specs.length === 1 ? `job ${failures[0]}` : `${failures.length} of ${specs.length} jobs failed: ${failures.join('; ')}`;
  throw new CliError(EXIT.negative, 'negative', summary);
}

// Follows every job until it settles; returns one failure text per job that did not get placed.
async function waitAll(client: MusterClient, jobIds: string[], flags: SubmitFlags, out: (line: string) => void): Promise<string[]> {
  const { settles } = await import('@muster/client');
  const deadline = new AbortController();
  const timer = flags.waitTimeout === undefined ? undefined : setTimeout(() => deadline.abort(), flags.waitTimeout * 1000);
  const showBar = flags.json !== true && jobIds.length > 1 && process.stdout.isTTY === true;
  const bars = showBar ? new MultiBar({ format: 'waiting  {bar}  {value}/{total} settled', hideCursor: true, clearOnComplete: true }, Presets.shades_classic) : null;
  const bar = bars?.create(jobIds.length, 0) ?? null;
  const print = (line: string): void => {
    if (bars === null) out(line);
    else bars.log(`${line}\n`);
  };
  const settled = new Map<string, Decision>();
  try {
    await Promise.all(
      jobIds.map(async (jobId) => {
        for await (const decision of client.watch(jobId, { signal: deadline.signal })) {
          print(flags.json === true ? JSON.stringify(decision) : decisionLine(decision));
          if (decision.type !== 'GangResized' && settles(decision)) {
            settled.set(jobId, decision);
            bar?.increment();
            return;
          }
        }
      }),
    );
  } finally {
    clearTimeout(timer);
    bars?.stop();
  }
  return jobIds.flatMap((jobId) => {
    const decision = settled.get(jobId);
    if (decision === undefined) return [`${jobId} not placed within ${flags.waitTimeout} s`];
    if (decision.type === 'GangAborted') return [`${jobId} aborted (${decision.reason.category})`];
    return [];
  });
}
