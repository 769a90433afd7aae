// Composition root of one scheduler replica as its own process: flags and environment, a pino
// logger, signals. `muster scheduler` runs the same thing; tests spawn this file to kill it.
import { parseArgs } from 'node:util';
import pino from 'pino';
import { logDestination } from './logDestination.ts';
import { SCHEDULER_FLAGS, flagValues } from './schedulerFlags.ts';
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
    'log-level': { type: 'string' },
    ...Object.fromEntries(SCHEDULER_FLAGS.map((f) => [f.flag, { type: 'string' as const }])),
  },
  strict: true,
});
const { values } = parseFlags();

const optional = flagValues(values as Record<string, string | undefined>, process.env);
if (optional instanceof Error) {
  process.stderr.write(`${optional.message}\n`);
  process.exit(2);
}
const logger = pino({ level: values['log-level'] ?? process.env.LOG_LEVEL ?? 'info' }, logDestination(1));
const handle = await startScheduler({
  natsUrl: (values.nats ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222').split(','),
  id: values.id ?? process.env.MUSTER_ID ?? `s-${process.pid}`,
  logger,
  ...(process.env.NATS_USER === undefined ? {} : { user: process.env.NATS_USER, pass: process.env.NATS_PASSWORD ?? '' }),
  ...optional,
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void handle.stop().then(() => process.exit(0));
  });
}
