import { Command } from 'commander';
import { renderTable } from '../format.ts';
import { positiveInt, withClient, withNatsOptions } from '../natsOptions.ts';
import { truncationNote } from '../listNote.ts';
import type { NatsFlags } from '../natsOptions.ts';
import type { JobSummary } from '@muster/client';

interface JobsFlags extends NatsFlags {
  json?: boolean;
  status?: string;
  limit?: number;
}

/** `muster jobs [--status S] [--limit N] [--json]`: the jobs a scheduler replica knows (as many as one reply carries; stderr says how many were left out). */
export function jobsCommand(): Command {
  return withNatsOptions(new Command('jobs'))
    .description('list the jobs the scheduler knows (answered by any replica)')
    .option('--status <status>', 'only jobs with this status (pending, running, succeeded, failed, closed, cancelled, timedout, runtime-limit)')
    .option('--limit <n>', 'at most n jobs (a reply carries as many as fit the server\'s max payload in any case)', positiveInt)
    .option('--json', 'print the rows as a JSON array')
    .action(async (flags: JobsFlags) => {
      const listed = await withClient(flags, (client) => client.jobList({ ...(flags.status === undefined ? {} : { status: flags.status }), ...(flags.limit === undefined ? {} : { limit: flags.limit }) }));
      const jobs = listed.items;
      const note = truncationNote(listed, 'jobs');
      if (note !== null) process.stderr.write(`${note}\n`);
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify(jobs, null, 2)}\n`);
        return;
      }
      if (jobs.length === 0) {
        process.stdout.write(flags.status === undefined ? 'no jobs\n' : `no ${flags.status} jobs\n`);
        return;
      }
      const rows = jobs.map((j) => [
        j.id, j.status, j.user, j.queue, String(j.priority), membersCell(j), j.nodes.join(',') || '-', j.reason ?? '-',
        String(j.attempt ?? 0), failureCell(j),
        j.expectedStart === null ? '-' : new Date(j.expectedStart).toISOString(),
      ]);
      process.stdout.write(`${renderTable(['JOB', 'STATUS', 'USER', 'QUEUE', 'PRIO', 'MEMBERS', 'NODES', 'REASON', 'ATTEMPT', 'LAST FAILURE', 'EXPECTED START'], rows)}\n`);
    });
}

/** The LAST FAILURE cell (DESIGN.md §15): the member that failed last and how (`member 1 exit 7`, `member 0 SIGKILL`), or `-`. */
export function failureCell(j: JobSummary): string {
  const f = j.lastFailure;
  if (f === undefined) return '-';
  return `member ${f.member} ${f.exitCode !== undefined ? `exit ${f.exitCode}` : (f.signal ?? 'failed')}`;
}

/**
 * The MEMBERS cell: the gang size; an elastic job's size now over its full size while it runs
 * (`24/32`), its range otherwise (`16-32`); a job with alternatives names the one it runs.
 */
export function membersCell(j: JobSummary): string {
  const size = j.minSize === undefined ? String(j.members) : j.status === 'running' ? `${j.size}/${j.count}` : `${j.minSize}-${j.count}`;
  return j.alternative === undefined ? size : `${size} (alternative ${j.alternative})`;
}
