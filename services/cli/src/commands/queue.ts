import { Command } from 'commander';
import type { MusterClient, QueueView } from '@muster/client';
import type { QueueSpec } from '@muster/core';
import { CliError, EXIT } from '../cliError.ts';
import { withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { cores, gib, renderTable } from '../format.ts';
import { readJsonFile } from '../readJsonFile.ts';

/**
 * `muster queue set FILE`: an operator creates or replaces queues (DESIGN.md §12) from a QueueSpec
 * JSON file, or a JSON array of them (parents before children). Every spec is validated first and
 * nothing is sent unless all are valid; where a replica answers, the tree checks the scheduler
 * makes at ingest (the parent exists, no cycle, the depth) are made here too, against its queues.
 */
export function queueCommand(): Command {
  const set = withNatsOptions(new Command('set'))
    .description('create or replace queues from a QueueSpec JSON file (or an array of them, parents first); an operator\'s input')
    .argument('<file>', 'QueueSpec JSON file (- reads standard input), e.g. {"name": "team-a", "guaranteed": {"gpus": 8}}')
    .action(async (file: string, flags: NatsFlags) => {
      const body = readJsonFile(file);
      const { validateQueueSpec } = await import('@muster/core');
      const many = Array.isArray(body);
      const specs = (many ? body : [body]).map((spec, i) => {
        const valid = validateQueueSpec(spec);
        if (valid.ok) return valid.value;
        throw new CliError(EXIT.usage, 'invalid', `${file}: ${many ? `[${i}].` : ''}${valid.error.message} (nothing was sent)`);
      });
      if (specs.length === 0) throw new CliError(EXIT.usage, 'invalid', `${file}: an empty array: no queue to set`);
      await withClient(flags, async (client) => {
        await checkTree(client, specs, file, many);
        for (const spec of specs) {
          const { inputSeq } = await client.setQueue(spec);
          process.stdout.write(`queue ${spec.name} sent (input ${inputSeq})\n`);
        }
      });
    });
  return new Command('queue').description('define the queue tree (guarantees, limits, weights, preemption): muster queue set FILE').addCommand(set);
}

/**
 * The ingest's tree checks, made against the queues a replica reports (each spec in turn, as the
 * leader would ingest them); skipped when no replica answers (the leader still checks).
 */
async function checkTree(client: MusterClient, specs: QueueSpec[], file: string, many: boolean): Promise<void> {
  let views: QueueView[];
  try {
    views = await client.queues();
  } catch {
    return;
  }
  const table: Record<string, QueueSpec> = Object.create(null) as Record<string, QueueSpec>;
  for (const v of views) {
    if (v.implicit) continue;
    table[v.name] = { name: v.name, ...(v.parent === null ? {} : { parent: v.parent }), weight: v.weight, guaranteed: v.guaranteed, max: v.max, preemption: { withinQueue: 'never', reclaim: true } };
  }
  const { queueSetIssue } = await import('@muster/core');
  for (const [i, spec] of specs.entries()) {
    const issue = queueSetIssue(table, spec);
    if (issue !== null) throw new CliError(EXIT.usage, 'invalid', `${file}: ${many ? `[${i}].` : ''}${issue.message} (nothing was sent)`);
    table[spec.name] = spec;
  }
}

interface QueuesFlags extends NatsFlags {
  json?: boolean;
}

/** `muster queues [--json]`: the queues with their use, guarantee, max, borrowing and job counts. */
export function queuesCommand(): Command {
  return withNatsOptions(new Command('queues'))
    .description('list the queues with use/guaranteed/max per resource, what each borrows, and its pending and running jobs (answered by any replica)')
    .option('--json', 'print the rows as a JSON array')
    .action(async (flags: QueuesFlags) => {
      const queues = await withClient(flags, (client) => client.queues());
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify(queues, null, 2)}\n`);
        return;
      }
      if (queues.length === 0) {
        process.stdout.write('no queues\n');
        return;
      }
      process.stdout.write(`${queuesTable(queues)}\n`);
    });
}

/** The `muster queues` table: one row per queue, each resource as used/guaranteed/max (- where not named). */
export function queuesTable(queues: readonly QueueView[]): string {
  const cell = (q: QueueView, r: 'gpus' | 'cpu' | 'memoryMb', show: (n: number) => string): string =>
    `${show(q.used[r])}/${q.guaranteed[r] === undefined ? '-' : show(q.guaranteed[r])}/${q.max[r] === undefined ? '-' : show(q.max[r])}`;
  const rows = queues.map((q) => [
    q.implicit ? `${q.name} (implicit)` : q.name,
    q.parent ?? '-',
    String(q.weight),
    cell(q, 'gpus', String),
    cell(q, 'cpu', cores),
    cell(q, 'memoryMb', gib),
    borrowedText(q),
    String(q.pending),
    String(q.running),
  ]);
  return renderTable(['QUEUE', 'PARENT', 'WEIGHT', 'GPUS', 'CPU', 'MEM GiB', 'BORROWED', 'PENDING', 'RUNNING'], rows);
}

function borrowedText(q: QueueView): string {
  const parts: string[] = [];
  if (q.borrowed.gpus > 0) parts.push(`gpus ${q.borrowed.gpus}`);
  if (q.borrowed.cpu > 0) parts.push(`cpu ${cores(q.borrowed.cpu)}`);
  if (q.borrowed.memoryMb > 0) parts.push(`mem ${gib(q.borrowed.memoryMb)}`);
  return parts.length === 0 ? '-' : parts.join(', ');
}
