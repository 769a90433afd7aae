import { Command } from 'commander';
import { withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { readJsonFile } from '../readJsonFile.ts';

/** `muster policy FILE`: an operator sets the scheduling policy (DESIGN.md §11); the fields given replace the ones in force. */
export function policyCommand(): Command {
  return withNatsOptions(new Command('policy'))
    .description('set the scheduling policy from a PolicySpec JSON file (reserveDepth, assumedRuntimeMs, minRuntimeBeforePreemptionMs, fairShareHalfLifeMs); an operator\'s input')
    .argument('<file>', 'PolicySpec JSON file (- reads standard input), e.g. {"reserveDepth": 4}')
    .action(async (file: string, flags: NatsFlags) => {
      const spec = readJsonFile(file);
      const { inputSeq } = await withClient(flags, (client) => client.setPolicy(spec));
      process.stdout.write(`policy ${JSON.stringify(spec)} sent (input ${inputSeq})\n`);
    });
}
