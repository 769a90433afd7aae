// Composition root of one scheduler replica as its own process: flags and environment, a pino
// logger, signals. `muster scheduler` runs the same thing; tests spawn this file to kill it.
import { parseArgs } from 'node:util';
import pino from 'pino';
import { logDestination } from './logDestination.ts';
import { startScheduler } from './startScheduler.ts';

function parseFlags(): ReturnType<typeof parse> {
  try {
    return parse();
  } catch (err) {
    process.stderr.write(`muster scheduler: ${(err as Error).message}\n`);
    process.exit(2);
  }
}

const parse = () => parseArgs({
  options: {
    id: { type: 'string' },
    nats: { type: 'string' },
    'lease-ms': { type: 'string' },
    'heartbeat-timeout-ms': { type: 'string' },
    'checkpoint-every': { type: 'string' },
    'snapshot-every': { type: 'string' },
    'snapshot-every-events': { type: 'string' },
    'retain-finished-ms': { type: 'string' },
    'max-batch-inputs': { type: 'string' },
    replicas: { type: 'string' },
    'metrics-port': { type: 'string' },
    'metrics-host': { type: 'string' },
    'log-level': { type: 'string' },
    'stream-check-ms': { type: 'string' },
  },
  strict: true,
});
const { values } = parseFlags();

function numberFlag(name: string, raw: string | undefined, least = 0): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < least) {
    process.stderr.write(`--${name} must be ${least === 0 ? 'a non-negative' : 'a positive'} integer, got ${raw}\n`);
    process.exit(2);
  }
  return n;
}

const logger = pino({ level: values['log-level'] ?? process.env.LOG_LEVEL ?? 'info' }, logDestination(1));
const optional = {
  leaseMs: numberFlag('lease-ms', values['lease-ms'] ?? process.env.MUSTER_LEASE_MS),
  heartbeatTimeoutMs: numberFlag('heartbeat-timeout-ms', values['heartbeat-timeout-ms'] ?? process.env.MUSTER_HEARTBEAT_TIMEOUT_MS),
  checkpointEvery: numberFlag('checkpoint-every', values['checkpoint-every'] ?? process.env.MUSTER_CHECKPOINT_EVERY),
  snapshotEvery: numberFlag('snapshot-every', values['snapshot-every'] ?? process.env.MUSTER_SNAPSHOT_EVERY),
  snapshotEveryEvents: numberFlag('snapshot-every-events', values['snapshot-every-events'] ?? process.env.MUSTER_SNAPSHOT_EVERY_EVENTS),
  retainFinishedMs: numberFlag('retain-finished-ms', values['retain-finished-ms'] ?? process.env.MUSTER_RETAIN_FINISHED_MS),
  maxBatchInputs: numberFlag('max-batch-inputs', values['max-batch-inputs'] ?? process.env.MUSTER_MAX_BATCH_INPUTS, 1),
  replicas: numberFlag('replicas', values.replicas ?? process.env.MUSTER_REPLICAS),
  metricsPort: numberFlag('metrics-port', values['metrics-port'] ?? process.env.MUSTER_METRICS_PORT),
  metricsHost: values['metrics-host'] ?? process.env.MUSTER_METRICS_HOST,
  streamCheckMs: numberFlag('stream-check-ms', values['stream-check-ms'] ?? process.env.MUSTER_STREAM_CHECK_MS),
};
const handle = await startScheduler({
  natsUrl: (values.nats ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222').split(','),
  id: values.id ?? process.env.MUSTER_ID ?? `s-${process.pid}`,
  logger,
  ...(process.env.NATS_USER === undefined ? {} : { user: process.env.NATS_USER, pass: process.env.NATS_PASSWORD ?? '' }),
  ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void handle.stop().then(() => process.exit(0));
  });
}
