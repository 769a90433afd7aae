import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import type { MusterClient } from '@muster/client';
import { CliError, EXIT } from './cliError.ts';

/** The connection flags every networked subcommand takes. */
export interface NatsFlags {
  nats?: string;
  user?: string;
  password?: string;
  timeout: number;
}

/** Where and as whom to connect, resolved from flags, then the environment, then defaults. */
export interface NatsTarget {
  servers: string[];
  /** Credentials and inbox prefix (a restricted user receives replies only below `_INBOX_<user>`). */
  auth: { user?: string; pass?: string; inboxPrefix?: string };
  timeoutMs: number;
}

/** The default NATS url when neither `--nats` nor `NATS_URL` is given. */
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

/** Parses a positive integer flag value, or fails with commander's one-line usage error. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** Parses a non-negative integer flag value, or fails with commander's one-line usage error. */
export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return n;
}

/** Adds `--nats`, `--user`, `--password` and `--timeout` to a subcommand. */
export function withNatsOptions(cmd: Command): Command {
  return cmd
    .option('--nats <url>', `NATS url(s), comma-separated (default: $NATS_URL or ${DEFAULT_NATS_URL})`)
    .option('--user <name>', 'NATS user (default: $NATS_USER)')
    .option('--password <secret>', 'NATS password (default: $NATS_PASSWORD)')
    .option('--timeout <ms>', 'milliseconds to wait for NATS and for each answer', positiveInt, 5000);
}

/** Resolves the connection flags against the environment. */
export function natsTarget(flags: NatsFlags, env: NodeJS.ProcessEnv = process.env): NatsTarget {
  const url = flags.nats ?? env.NATS_URL ?? DEFAULT_NATS_URL;
  const user = flags.user ?? env.NATS_USER;
  const pass = flags.password ?? env.NATS_PASSWORD;
  const inboxPrefix = env.NATS_INBOX_PREFIX ?? (user === undefined ? undefined : `_INBOX_${user}`);
  return {
    servers: url.split(',').map((s) => s.trim()).filter((s) => s !== ''),
    auth: {
      ...(user === undefined ? {} : { user }),
      ...(pass === undefined ? {} : { pass }),
      ...(inboxPrefix === undefined ? {} : { inboxPrefix }),
    },
    timeoutMs: flags.timeout,
  };
}

/** Connects a client, runs `fn` with it and disconnects; an unreachable server is exit code 3. */
export async function withClient<T>(flags: NatsFlags, fn: (client: MusterClient) => Promise<T>): Promise<T> {
  const target = natsTarget(flags);
  // loaded on use, so that help and usage errors answer at once
  const { connectClient, isMusterError } = await import('@muster/client');
  let client: MusterClient;
  try {
    client = await connectClient(target.servers, { ...target.auth, connectTimeoutMs: target.timeoutMs, timeoutMs: target.timeoutMs, name: 'muster-cli' });
  } catch (err) {
    const reason = isMusterError(err) && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
    throw new CliError(EXIT.unreachable, 'unreachable', `cannot reach NATS at ${target.servers.join(',')}: ${reason}`, { cause: err });
  }
  try {
    return await fn(client);
  } finally {
    await client.disconnect().catch(() => undefined);
  }
}
