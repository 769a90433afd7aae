import { Command } from 'commander';
import { CliError, EXIT } from '../cliError.ts';
import { readUserFile } from '../readJsonFile.ts';

/** `muster simulate SCENARIO`: the offline what-if run of DESIGN.md §8, no NATS involved. */
export function simulateCommand(): Command {
  return new Command('simulate')
    .description('run a scenario through the scheduler core offline and print every decision as a JSON line, then a summary')
    .argument('<scenario>', 'scenario JSON file (- reads standard input)')
    .action(async (file: string) => {
      const { runScenarioText } = await import('@muster/core');
      const result = runScenarioText(readUserFile(file));
      if (!result.ok) throw new CliError(EXIT.usage, 'bad-scenario', `${file}: ${result.error}`);
      process.stdout.write(result.lines.map((line) => `${line}\n`).join(''));
    });
}
