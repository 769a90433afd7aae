import { Command } from 'commander';
import { withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';

/** `muster close JOB`: release a running job, typically one kept warm with minInstances. */
export function closeCommand(): Command {
  return withNatsOptions(new Command('close'))
    .description('release a running job (typically one kept warm with minInstances)')
    .argument('<job>', 'job id')
    .action(async (jobId: string, flags: NatsFlags) => {
      const { inputSeq } = await withClient(flags, (client) => client.close(jobId));
      process.stdout.write(`close of ${jobId} requested (input ${inputSeq})\n`);
    });
}
