import { Command } from 'commander';
import { renderTable } from '../format.ts';
import { withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';

interface JobsFlags extends NatsFlags {
  json?: boolean;
  status?: string;
}

/** `muster jobs [--status S] [--json]`: the jobs a scheduler replica knows. */
export function jobsCommand(): Command {
  return withNatsOptions(new Command('jobs'))
    .description('list the jobs the scheduler knows (answered by any replica)')
    .option('--status <status>', 'only jobs with this status (pending, running, succeeded, failed, closed, cancelled, timedout, runtime-limit)')
    .option('--json', 'print the rows as a JSON array')
    .action(async (flags: JobsFlags) => {
      const jobs = await withClient(flags, (client) => client.jobs(flags.status === undefined ? {} : { status: flags.status }));
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify(jobs, null, 2)}\n`);
        return;
      }
      if (jobs.length === 0) {
        process.stdout.write(flags.status === undefined ? 'no jobs\n' : `no ${flags.status} jobs\n`);
        return;
      }
      const rows = jobs.map((j) => [
        j.id, j.status, j.user, j.queue, String(j.priority), j.alternative === undefined ? String(j.members) : `${j.members} (alternative ${j.alternative})`, j.nodes.join(',') || '-', j.reason ?? '-',
        j.expectedStart === null ? '-' : new Date(j.expectedStart).toISOString(),
      ]);
      process.stdout.write(`${renderTable(['JOB', 'STATUS', 'USER', 'QUEUE', 'PRIO', 'MEMBERS', 'NODES', 'REASON', 'EXPECTED START'], rows)}\n`);
    });
}
