// Composition root of the `muster` command: one subcommand per file under commands/, registered
// below; every error becomes one line on stderr and an exit code scripts can rely on (cliError.ts).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { agentCommand } from './commands/agent.ts';
import { auditCommand } from './commands/audit.ts';
import { cancelCommand } from './commands/cancel.ts';
import { closeCommand } from './commands/close.ts';
import { drillCommand } from './commands/drill.ts';
import { explainCommand } from './commands/explain.ts';
import { jobsCommand } from './commands/jobs.ts';
import { logsCommand } from './commands/logs.ts';
import { nodesCommand } from './commands/nodes.ts';
import { policyCommand } from './commands/policy.ts';
import { queueCommand, queuesCommand } from './commands/queue.ts';
import { schedulerCommand } from './commands/scheduler.ts';
import { simulateCommand } from './commands/simulate.ts';
import { submitCommand } from './commands/submit.ts';
import { uiCommand } from './commands/ui.ts';
import { upCommand } from './commands/up.ts';
import { errorExit } from './errorExit.ts';

/** The subcommands, in the order `muster --help` lists them. */
const COMMANDS: (() => Command)[] = [
  upCommand,
  uiCommand,
  submitCommand,
  jobsCommand,
  nodesCommand,
  explainCommand,
  logsCommand,
  cancelCommand,
  closeCommand,
  policyCommand,
  queueCommand,
  queuesCommand,
  schedulerCommand,
  agentCommand,
  simulateCommand,
  auditCommand,
  drillCommand,
];

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('muster')
  .description('muster: an event-sourced gang scheduler on NATS JetStream')
  .version(version)
  .showSuggestionAfterError(true);
for (const make of COMMANDS) program.addCommand(make());
const everyCommand = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(everyCommand)];
for (const cmd of everyCommand(program)) {
  // commander would print its own error and exit: report it our way instead (one line, exit 2)
  cmd.exitOverride().configureOutput({ outputError: () => undefined });
}

let exitCode: number;
try {
  await program.parseAsync(process.argv);
  exitCode = 0;
} catch (err) {
  const outcome = errorExit(err);
  if (outcome.line !== null) process.stderr.write(`muster: ${outcome.line}\n`);
  if (process.env.MUSTER_DEBUG === '1' && err instanceof Error) process.stderr.write(`${err.stack ?? ''}\n`);
  exitCode = outcome.exitCode;
}
// let piped output drain before exiting: a client's reconnect timers must not keep the process alive
process.stdout.write('', () => process.exit(exitCode));
