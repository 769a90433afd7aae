import { Command } from 'commander';
import type { Explanation } from '@muster/client';
import { renderTable } from '../format.ts';
import { explainAt } from './audit.ts';
import { nonNegativeInt, withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';

interface ExplainFlags extends NatsFlags {
  json?: boolean;
  at?: number;
}

/** `muster explain JOB [--json]`: why a job is pending (or where it runs), in words and host counts. */
export function explainCommand(): Command {
  return withNatsOptions(new Command('explain'))
    .description('say why a job waits (its reason, in words and host counts) or where it runs')
    .argument('<job>', 'job id')
    .option('--json', 'print the explanation as JSON')
    .option('--at <seq>', 'as of this log sequence: replay the log locally to it and explain from that state', nonNegativeInt)
    .action(async (jobId: string, flags: ExplainFlags) => {
      const explanation = flags.at === undefined ? await withClient(flags, (client) => client.explain(jobId)) : await explainAt(flags, jobId, flags.at);
      process.stdout.write(flags.json === true ? `${JSON.stringify(explanation, null, 2)}\n` : renderExplanation(explanation));
    });
}

/** The explanation as text: its sentence, the timeout when there is one, then a table of host counts. */
export function renderExplanation(e: Explanation): string {
  const lines = [e.text];
  if (e.reason !== null && e.status === 'pending') lines.push(`last attempt: ${e.reason.message}`);
  if (e.deadline !== null) lines.push(`gives up at ${new Date(e.deadline).toISOString()} unless placed`);
  const hosts = Object.entries(e.hosts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (e.status === 'pending' && (hosts.length > 0 || e.eligible > 0)) {
    const rows = [[String(e.fit), 'can take a member now'], ...hosts.map(([why, n]) => [String(n), why])];
    lines.push('', renderTable(['HOSTS', ''], rows));
  }
  return `${lines.join('\n')}\n`;
}
