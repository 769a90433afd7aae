import { Command } from 'commander';
import type { Explanation } from '@muster/client';
import { renderTable } from '../format.ts';
import { withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';

interface ExplainFlags extends NatsFlags {
  json?: boolean;
}

/** `muster explain JOB [--json]`: why a job is pending (or where it runs), in words and host counts. */
export function explainCommand(): Command {
  return withNatsOptions(new Command('explain'))
    .description('say why a job waits (its reason, in words and host counts) or where it runs')
    .argument('<job>', 'job id')
    .option('--json', 'print the explanation as JSON')
    .action(async (jobId: string, flags: ExplainFlags) => {
      const explanation = await withClient(flags, (client) => client.explain(jobId));
      process.stdout.write(flags.json === true ? `${JSON.stringify(explanation, null, 2)}\n` : renderExplanation(explanation));
    });
}

/** The explanation as text: status and reason, the sentences, then a table of host counts. */
export function renderExplanation(e: Explanation): string {
  const reason = e.reason;
  const head = `${e.jobId}: ${e.status}${reason === null ? '' : ` (${reason.category}${reason.cached === true ? ', cached' : ''})`}`;
  const lines = [head];
  if (e.message !== '') lines.push(e.message);
  const hosts = Object.entries(reason?.hosts ?? {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (hosts.length > 0) {
    lines.push('', renderTable(['HOSTS', 'WHY NOT'], hosts.map(([why, n]) => [String(n), why])));
  }
  return `${lines.join('\n')}\n`;
}
