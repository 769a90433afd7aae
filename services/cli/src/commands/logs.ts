import { Command } from 'commander';
import type { MusterClient, OutputLine } from '@muster/client';
import { nonNegativeInt, withClient, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';
import { untilStopped } from '../untilStopped.ts';

interface LogsFlags extends NatsFlags {
  member?: number;
  attempt?: number;
  follow?: boolean;
  json?: boolean;
}

/** How often `--follow` asks whether the job has ended, and how long it reads on after that (the agents' last batches). */
const FOLLOW_CHECK_MS = 1_000;
const FOLLOW_TAIL_MS = 2_000;

/**
 * `muster logs JOB [--member N] [--attempt K] [--follow] [--json]`: the lines the job's members
 * printed, every node and attempt, each prefixed with its member (like `docker compose logs`), an
 * attempt boundary marked by a line of its own; an unknown job is a one-line error.
 */
export function logsCommand(): Command {
  return withNatsOptions(new Command('logs'))
    .description("print a job's output: every member's stdout and stderr lines, in order, across the gang's attempts")
    .argument('<job>', 'job id')
    .option('--member <n>', "only this member's lines", nonNegativeInt)
    .option('--attempt <k>', 'only the lines of this attempt (0, then 1, 2, … after restarts)', nonNegativeInt)
    .option('-f, --follow', 'keep printing lines as they come, until the job ends (or Ctrl-C)')
    .option('--json', 'print one JSON object per line: {jobId, node, member, attempt, stream, line, seq}')
    .action(async (jobId: string, flags: LogsFlags) => {
      await withClient(flags, async (client) => {
        // an unknown job is an error (the SDK's not-found), not an empty output
        const job = await client.job(jobId);
        const width = String(Math.max(0, ('members' in job ? job.members : 1) - 1)).length;
        const stop = new AbortController();
        if (flags.follow === true) void endWhenJobEnds(client, jobId, stop);
        const stopped = flags.follow === true ? untilStopped(stop.signal).then(() => stop.abort()) : null;
        let attempt = 0;
        const lines = client.logs(jobId, {
          ...(flags.member === undefined ? {} : { member: flags.member }),
          ...(flags.attempt === undefined ? {} : { attempt: flags.attempt }),
          ...(flags.follow === true ? { follow: true } : {}),
          signal: stop.signal,
        });
        for await (const line of lines) {
          if (flags.json === true) {
            process.stdout.write(`${JSON.stringify(line)}\n`);
            continue;
          }
          if (line.attempt !== attempt) process.stdout.write(`${'─'.repeat(width + 1)}┼ attempt ${line.attempt}\n`);
          attempt = line.attempt;
          process.stdout.write(renderLine(line, width));
        }
        stop.abort();
        await stopped;
      });
    });
}

/** One line as printed: the member, right-aligned to `width`, a bar, the text. */
export function renderLine(line: OutputLine, width: number): string {
  return `${String(line.member).padStart(width)} | ${line.line}\n`;
}

// Ends a follow a little after the job has ended (its members' last lines are on their way).
async function endWhenJobEnds(client: MusterClient, jobId: string, stop: AbortController): Promise<void> {
  // loaded here, as the client was: `--help` loads no NATS
  const { sleep } = await import('@muster/bus');
  while (!stop.signal.aborted) {
    await sleep(FOLLOW_CHECK_MS, stop.signal);
    if (stop.signal.aborted) return;
    const job = await client.job(jobId).catch(() => null);
    if (job !== null && job.status !== 'pending' && job.status !== 'running') {
      setTimeout(() => stop.abort(), FOLLOW_TAIL_MS);
      return;
    }
  }
}
