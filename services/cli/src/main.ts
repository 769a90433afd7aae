// Composition root of the `muster` command: one subcommand per file under commands/, registered
// below; every error becomes one line on stderr and an exit code scripts can rely on (cliError.ts).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { errorExit } from './errorExit.ts';

/**
 * The subcommands, in the order `muster --help` lists them, each with the module that defines it:
 * a command loads only its own module (and what that module imports when it runs), so `--help`
 * and a quick `muster jobs` never load the drill, the scheduler, NATS or pino.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  up: async () => (await import('./commands/up.ts')).upCommand(),
  ui: async () => (await import('./commands/ui.ts')).uiCommand(),
  submit: async () => (await import('./commands/submit.ts')).submitCommand(),
  jobs: async () => (await import('./commands/jobs.ts')).jobsCommand(),
  nodes: async () => (await import('./commands/nodes.ts')).nodesCommand(),
  explain: async () => (await import('./commands/explain.ts')).explainCommand(),
  logs: async () => (await import('./commands/logs.ts')).logsCommand(),
  cancel: async () => (await import('./commands/cancel.ts')).cancelCommand(),
  close: async () => (await import('./commands/close.ts')).closeCommand(),
  policy: async () => (await import('./commands/policy.ts')).policyCommand(),
  queue: async () => (await import('./commands/queue.ts')).queueCommand(),
  queues: async () => (await import('./commands/queue.ts')).queuesCommand(),
  scheduler: async () => (await import('./commands/scheduler.ts')).schedulerCommand(),
  agent: async () => (await import('./commands/agent.ts')).agentCommand(),
  simulate: async () => (await import('./commands/simulate.ts')).simulateCommand(),
  audit: async () => (await import('./commands/audit.ts')).auditCommand(),
  drill: async () => (await import('./commands/drill.ts')).drillCommand(),
};

/** The subcommand argv names (`muster NAME …` or `muster help NAME`), or null: then every one is defined (the overview, a typo's suggestions). */
function invoked(argv: string[]): string | null {
  const words = argv.filter((a) => !a.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? name : null;
}

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('muster')
  .description('muster: an event-sourced gang scheduler on NATS JetStream')
  .version(version)
  .showSuggestionAfterError(true);
const only = invoked(process.argv.slice(2));
const names = only === null ? Object.keys(COMMANDS) : [only];
for (const command of await Promise.all(names.map((name) => COMMANDS[name]!()))) program.addCommand(command);
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
