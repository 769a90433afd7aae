// The tunables of a scheduler replica, declared once: each one's option, flag, environment
// variable, default and description. The replica's defaults (config.ts), its process's flags
// (main.ts), `muster scheduler`'s flags and libs/stack's argv are all made from this table.

/** How a flag's text is read: a whole number (at least 1, or at least 0), or the text itself. */
export type FlagKind = 'positive' | 'non-negative' | 'text';

/** One tunable of a replica. */
export interface SchedulerFlag {
  /** The SchedulerOptions field it sets (commander's camelCase of the flag). */
  option: string;
  /** The command-line flag, without its dashes. */
  flag: string;
  /** The environment variable read when the flag is absent. */
  env: string;
  kind: FlagKind;
  default: number | string;
  /** What it does, for `--help` and docs/scheduler.md. */
  description: string;
}

/** Every tunable of a replica, in the order `--help` lists them. */
export const SCHEDULER_FLAGS = [
  { option: 'replicas', flag: 'replicas', env: 'MUSTER_REPLICAS', kind: 'positive', default: 1, description: 'stream replicas: 1 on one server, 3 on a cluster' },
  { option: 'leaseMs', flag: 'lease-ms', env: 'MUSTER_LEASE_MS', kind: 'positive', default: 400, description: 'a standby takes over after this long without a lease refresh (ms, monotonic clock)' },
  { option: 'heartbeatTimeoutMs', flag: 'heartbeat-timeout-ms', env: 'MUSTER_HEARTBEAT_TIMEOUT_MS', kind: 'non-negative', default: 15_000, description: 'mark a node lost after this long without heartbeats (ms; 0: never)' },
  { option: 'checkpointEvery', flag: 'checkpoint-every', env: 'MUSTER_CHECKPOINT_EVERY', kind: 'positive', default: 1000, description: 'a Checkpoint every n transactions' },
  { option: 'snapshotEvery', flag: 'snapshot-every', env: 'MUSTER_SNAPSHOT_EVERY', kind: 'non-negative', default: 5000, description: 'a snapshot every n transactions (0: none)' },
  { option: 'snapshotEveryEvents', flag: 'snapshot-every-events', env: 'MUSTER_SNAPSHOT_EVERY_EVENTS', kind: 'non-negative', default: 50_000, description: 'also a snapshot once n events were folded since the last (0: by transactions only)' },
  { option: 'retainFinishedMs', flag: 'retain-finished-ms', env: 'MUSTER_RETAIN_FINISHED_MS', kind: 'non-negative', default: 300_000, description: 'keep a finished job in the state this long (ms), then retire it' },
  { option: 'maxBatchInputs', flag: 'max-batch-inputs', env: 'MUSTER_MAX_BATCH_INPUTS', kind: 'positive', default: 1024, description: 'at most n buffered inputs ingested in one turn, before its session' },
  { option: 'metricsPort', flag: 'metrics-port', env: 'MUSTER_METRICS_PORT', kind: 'non-negative', default: 0, description: 'serve Prometheus metrics on GET /metrics at this port (0: none)' },
  { option: 'metricsHost', flag: 'metrics-host', env: 'MUSTER_METRICS_HOST', kind: 'text', default: '127.0.0.1', description: 'the address the metrics endpoint binds (0.0.0.0 for a scraper on another machine)' },
  { option: 'streamCheckMs', flag: 'stream-check-ms', env: 'MUSTER_STREAM_CHECK_MS', kind: 'non-negative', default: 5_000, description: 'every this many ms a running replica applies the stream and bucket definitions again: one deleted or lost under a running cluster is created again, said at error; 0: only at start' },
] as const satisfies readonly SchedulerFlag[];

/** The SchedulerOptions fields the table sets. */
export type FlagOption = (typeof SCHEDULER_FLAGS)[number]['option'];

/** The values of the flags given, by option: text for a text flag, else a number. */
export type FlagValues = { [F in (typeof SCHEDULER_FLAGS)[number] as F['option']]?: F['kind'] extends 'text' ? string : number };

/** A flag's `--help` text: its description, default and environment variable. */
export function flagHelp(f: SchedulerFlag): string {
  return `${f.description} (default ${f.default}; $${f.env})`;
}

/** The value of a flag's text (from argv or the environment), or an Error naming the flag. */
export function parseFlag(f: SchedulerFlag, raw: string): number | string | Error {
  if (f.kind === 'text') return raw;
  const n = Number(raw);
  const least = f.kind === 'positive' ? 1 : 0;
  if (!Number.isInteger(n) || n < least || raw.trim() === '') return new Error(`--${f.flag} must be ${least === 0 ? 'a non-negative' : 'a positive'} integer, got ${raw}`);
  return n;
}

/** The value of each flag from argv values (by flag name), else the environment; absent ones are left out. */
export function flagValues(argv: Record<string, string | undefined>, env: Record<string, string | undefined>): FlagValues | Error {
  const out: Record<string, number | string> = {};
  for (const f of SCHEDULER_FLAGS) {
    const raw = argv[f.flag] ?? env[f.env];
    if (raw === undefined) continue;
    const value = parseFlag(f, raw);
    if (value instanceof Error) return value;
    out[f.option] = value;
  }
  return out as FlagValues;
}
