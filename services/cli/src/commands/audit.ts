import { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import type { AuditProgress, AuditSource } from '@muster/auditor';
import type { Bus, ConnectOptions } from '@muster/bus';
import type { Explanation } from '@muster/core';
import { CliError, EXIT } from '../cliError.ts';
import { oneLine } from '../errorExit.ts';
import { natsTarget, nonNegativeInt, positiveInt, withNatsOptions } from '../natsOptions.ts';
import type { NatsFlags } from '../natsOptions.ts';

interface AuditFlags extends NatsFlags {
  json?: boolean;
  from?: number;
  to?: number;
  file?: string;
  at?: number;
  state?: boolean;
  job?: string;
}

/**
 * `muster audit`: replay the log, re-derive every decision, check the invariants (exit 0 only when
 * clean, 1 when a check failed); with `--at SEQ --state` or `--job ID`, the state or one job's story
 * as of a sequence (time travel).
 */
export function auditCommand(): Command {
  return withNatsOptions(new Command('audit'))
    .description('replay MUSTER_LOG (or a recorded history) with the same core, re-derive every decision and check the invariants; exit 0 only when clean')
    .option('--json', 'print the report (or the state) as JSON')
    .option('--from <seq>', 'first log sequence to check (earlier ones are replayed, not checked)', positiveInt)
    .option('--to <seq>', 'last log sequence to check (default: the end of the log)', positiveInt)
    .option('--file <history>', 'audit a recorded history (JSON lines {seq, tx}; inputs from NAME.inputs.jsonl beside it) instead of NATS')
    .option('--at <seq>', 'time travel: as of this log sequence (with --state or --job)', nonNegativeInt)
    .option('--state', 'with --at: print the state as of that sequence')
    .option('--job <id>', "with --at: print one job's story (every event about it) and its state")
    .action(async (flags: AuditFlags) => {
      checkUsage(flags);
      if (flags.at !== undefined) {
        await timeTravel(flags, flags.at);
        return;
      }
      const { auditLog } = await import('@muster/auditor');
      const progress = progressBar();
      const report = await withSource(flags, (source, connection) => auditLog(source, {
        ...(connection === null ? {} : { connection }),
        ...(flags.from === undefined ? {} : { fromSeq: flags.from }),
        ...(flags.to === undefined ? {} : { toSeq: flags.to }),
        ...(progress === null ? {} : { onProgress: progress.update }),
      })).finally(() => progress?.stop());
      const { renderAudit } = await import('./auditOutput.ts');
      process.stdout.write(flags.json === true ? `${JSON.stringify(report, null, 2)}\n` : renderAudit(report));
      if (!report.clean) {
        const first = report.failures[0];
        const where = first === undefined ? '' : `: first bad sequence ${first.seq} (${first.check}): ${first.message}`;
        throw new CliError(EXIT.negative, 'audit-failed', `audit failed with ${report.failureCount} failure(s)${where}`);
      }
    });
}

/** Why job `jobId` was where it was as of log sequence `seq`, from a local replay (for `muster explain --at`). */
export async function explainAt(flags: NatsFlags, jobId: string, seq: number): Promise<Explanation> {
  const [{ stateAt }, { explain }] = await Promise.all([import('@muster/auditor'), import('@muster/core')]);
  const at = await withSource({ ...flags }, (source) => stateAt(source, seq));
  const explanation = explain(at.state, jobId);
  if (explanation === null) throw new CliError(EXIT.negative, 'unknown-job', `job ${jobId} is not known as of sequence ${seq}`);
  return explanation;
}

function checkUsage(flags: AuditFlags): void {
  const usage = (message: string): never => {
    throw new CliError(EXIT.usage, 'usage', message);
  };
  if (flags.at === undefined) {
    if (flags.state === true || flags.job !== undefined) usage('--state and --job need --at SEQ');
    if (flags.from !== undefined && flags.to !== undefined && flags.to < flags.from) usage(`--to ${flags.to} is before --from ${flags.from}`);
    return;
  }
  if (flags.from !== undefined || flags.to !== undefined) usage('--at travels to one sequence: it takes no --from or --to');
  if (flags.state !== true && flags.job === undefined) usage('--at needs --state (the whole state) or --job ID (one job)');
}

async function timeTravel(flags: AuditFlags, seq: number): Promise<void> {
  const [{ jobStory, stateAt }, { renderState, renderStory }] = await Promise.all([import('@muster/auditor'), import('./auditOutput.ts')]);
  const json = flags.json === true;
  const jobId = flags.job;
  if (jobId !== undefined) {
    const story = await withSource(flags, (source) => jobStory(source, jobId, seq));
    warnChain(story.chain);
    process.stdout.write(json ? `${JSON.stringify(story, null, 2)}\n` : renderStory(story));
    return;
  }
  const at = await withSource(flags, (source) => stateAt(source, seq));
  warnChain(at.chain);
  const { stateHash } = await import('@muster/core');
  const hash = stateHash(at.state);
  process.stdout.write(json ? `${JSON.stringify({ seq: at.seq, stateHash: hash, state: at.state }, null, 2)}\n` : renderState(at, hash));
}

function warnChain(chain: { ok: boolean; brokenAt?: number; message?: string }): void {
  if (!chain.ok) process.stderr.write(`muster: warning: the hash chain is broken at ${chain.brokenAt}: ${chain.message ?? ''}\n`);
}

/**
 * Runs `fn` on the history file of `--file`, or on a bus connected to `--nats` with the options it
 * was connected with (for an audit's worker; null for a file) (unreachable: exit 3).
 */
async function withSource<T>(flags: AuditFlags, fn: (source: AuditSource, connection: ConnectOptions | null) => Promise<T>): Promise<T> {
  const { isAuditorError, readHistoryFile } = await import('@muster/auditor');
  const usageOf = (err: unknown): never => {
    if (isAuditorError(err)) throw new CliError(EXIT.usage, err.code, err.message, { cause: err });
    throw err;
  };
  if (flags.file !== undefined) {
    let history: AuditSource;
    try {
      history = readHistoryFile(flags.file);
    } catch (err) {
      return usageOf(err);
    }
    return fn(history, null).catch(usageOf);
  }
  const { connect } = await import('@muster/bus');
  const target = natsTarget(flags);
  const connection: ConnectOptions = { servers: target.servers, name: 'muster-audit', connectTimeoutMs: target.timeoutMs, timeoutMs: target.timeoutMs, maxReconnectAttempts: 3, ...target.auth };
  let bus: Bus;
  try {
    bus = await connect(connection);
  } catch (err) {
    throw new CliError(EXIT.unreachable, 'unreachable', `cannot reach NATS at ${target.servers.join(',')}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return await fn(bus, connection).catch((err: unknown) => {
      if (isAuditorError(err)) return usageOf(err);
      if (err instanceof CliError) throw err;
      const message = oneLine(err instanceof Error ? err.message : String(err));
      const hint = /stream not found/i.test(message) ? ' (has a muster scheduler ever run on this NATS?)' : '';
      throw new CliError(EXIT.unreachable, 'unreachable', `reading the log on ${target.servers.join(',')} failed: ${message}${hint}`, { cause: err });
    });
  } finally {
    await bus.close().catch(() => undefined);
  }
}

/** A progress bar with rate and ETA on stderr, for terminals only (null when stderr is not a TTY). */
function progressBar(): { update: (p: AuditProgress) => void; stop: () => void } | null {
  if (process.stderr.isTTY !== true) return null;
  const bar = new SingleBar({
    stream: process.stderr,
    format: 'audit [{bar}] {percentage}% | seq {value}/{total} | {rate} tx/s | ETA {remaining}',
    hideCursor: true,
    clearOnComplete: true,
  });
  let started = false;
  return {
    update: (p) => {
      const payload = { rate: p.txPerSec.toLocaleString('en-US'), remaining: `${Math.ceil(p.etaMs / 1000)}s` };
      if (!started) {
        started = true;
        bar.start(p.lastSeq, p.seq, payload);
        return;
      }
      bar.setTotal(p.lastSeq);
      bar.update(p.seq, payload);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}
