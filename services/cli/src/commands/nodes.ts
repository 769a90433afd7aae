import { Command } from 'commander';
import { cores, gib, renderTable } from '../format.ts';
import { positiveInt, withClient, withNatsOptions } from '../natsOptions.ts';
import { truncationNote } from '../listNote.ts';
import type { NatsFlags } from '../natsOptions.ts';

interface NodesFlags extends NatsFlags {
  json?: boolean;
  limit?: number;
}

/** `muster nodes [--limit N] [--json]`: the nodes a scheduler replica knows, with used and total capacity (as many as one reply carries; stderr says how many were left out). */
export function nodesCommand(): Command {
  return withNatsOptions(new Command('nodes'))
    .description('list the nodes the scheduler knows, with used/total capacity (answered by any replica)')
    .option('--limit <n>', 'at most n nodes (a reply carries as many as fit the server\'s max payload in any case)', positiveInt)
    .option('--json', 'print the rows as a JSON array')
    .action(async (flags: NodesFlags) => {
      const listed = await withClient(flags, (client) => client.nodeList(flags.limit === undefined ? {} : { limit: flags.limit }));
      const nodes = listed.items;
      const note = truncationNote(listed, 'nodes');
      if (note !== null) process.stderr.write(`${note}\n`);
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify(nodes, null, 2)}\n`);
        return;
      }
      if (nodes.length === 0) {
        process.stdout.write('no nodes\n');
        return;
      }
      const rows = nodes.map((n) => [
        n.id,
        n.status,
        `${cores(n.cpu.used)}/${cores(n.cpu.total)}`,
        `${gib(n.memoryMb.used)}/${gib(n.memoryMb.total)}`,
        `${n.gpus.used}/${n.gpus.total}`,
        `${n.slots.used}/${n.slots.total ?? '-'}`,
        n.jobs.length === 0 ? '-' : n.jobs.join(','),
        Object.entries(n.labels).map(([k, v]) => `${k}=${v}`).join(',') || '-',
      ]);
      process.stdout.write(`${renderTable(['NODE', 'STATUS', 'CPU', 'MEM GiB', 'GPUS', 'SLOTS', 'JOBS', 'LABELS'], rows)}\n`);
    });
}
