import { Command } from 'commander';
import { withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';

/** `muster cancel JOB`: ask the scheduler to cancel a pending or running job. */
export function cancelCommand(): Command {
  return withNatsOptions(new Command('cancel'))
    .description('cancel a pending or running job (a final "cancelled" decision follows)')
    .argument('<job>', 'job id')
    .action(async (jobId: string, flags: NatsFlags) => {
      const { inputSeq } = await withClient(flags, (client) => client.cancel(jobId));
      process.stdout.write(`cancel of ${jobId} requested (input ${inputSeq})\n`);
    });
}
