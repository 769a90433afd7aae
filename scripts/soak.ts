// npm run soak -- [--duration S] [--fault-every S] [--schedule chaotic|sequential|both] [--seed N]
//                 [--rate N] [--nodes N] [--faults a,b,…] [--json] [--keep-logs DIR]
// The HA soak: the chaotic drill with every fault kind (kill -9 and SIGSTOP of the leader, NATS node
// and standby restarts, a replica an hour fast) for an hour by default, on a fresh loopback cluster
// (three NATS nodes, three scheduler replicas, simulated nodes scaled from the rate); prints the
// report and exits 0 only when every drill passed. Every fault kind that needs what this machine
// lacks (libfaketime) is skipped and the report says so.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { drillTable, runSoak } from '@muster/drill';
import type { DrillSchedule, FaultKind } from '@muster/drill';

const USAGE = 'usage: npm run soak -- [--duration S] [--fault-every S] [--schedule chaotic|sequential|both] [--seed N] [--rate N] [--nodes N] [--faults a,b,…] [--json] [--keep-logs DIR]';

function fail(message: string): never {
  process.stderr.write(`soak: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function numberFlag(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) fail(`--${name} must be a number, got ${raw}`);
  return n;
}

let values: ReturnType<typeof parse>['values'];
function parse() {
  return parseArgs({
    options: {
      duration: { type: 'string' },
      'fault-every': { type: 'string' },
      schedule: { type: 'string' },
      seed: { type: 'string' },
      rate: { type: 'string' },
      nodes: { type: 'string' },
      faults: { type: 'string' },
      json: { type: 'boolean' },
      'keep-logs': { type: 'string' },
    },
    strict: true,
  });
}
try {
  values = parse().values;
} catch (err) {
  fail((err as Error).message);
}

const schedule = values.schedule ?? 'chaotic';
if (schedule !== 'both' && schedule !== 'sequential' && schedule !== 'chaotic') fail(`--schedule must be both, sequential or chaotic, got ${schedule}`);
const schedules: DrillSchedule[] = schedule === 'both' ? ['sequential', 'chaotic'] : [schedule];

const interrupt = new AbortController();
process.once('SIGINT', () => interrupt.abort());
process.once('SIGTERM', () => interrupt.abort());

let soak: Awaited<ReturnType<typeof runSoak>>;
try {
  soak = await runSoak(
    {
      schedules,
      durationS: numberFlag('duration', values.duration, 3_600),
      faultEveryS: numberFlag('fault-every', values['fault-every'], 10),
      seed: numberFlag('seed', values.seed, 1),
      rate: numberFlag('rate', values.rate, 20),
      ...(values.nodes === undefined ? {} : { nodes: numberFlag('nodes', values.nodes, 0) }),
      // some kinds only (the drill refuses a name it does not know)
      ...(values.faults === undefined ? {} : { faults: values.faults.split(',').map((k) => k.trim()) as FaultKind[] }),
      // the replicas' lease and election lines (info) time each takeover's split; the agents' member lines would fill the disk
      logLevel: 'info',
      agentLogLevel: 'warn',
      keepLogsDir: values['keep-logs'] === undefined ? null : resolve(values['keep-logs']),
    },
    {
      progress: (line) => process.stderr.write(`${line}\n`),
      signal: interrupt.signal,
      onReport: (report) => process.stdout.write(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : `\n${drillTable(report)}\n`),
    },
  );
} catch (err) {
  // resolveDrillOptions refuses a bad value before anything starts
  fail((err as Error).message);
}
process.stderr.write(`soak: ${soak.ok ? 'PASS' : 'FAIL'} (${soak.drills.filter((d) => d.ok).length} of ${schedules.length} drills passed)\n`);
process.exit(soak.ok ? 0 : 1);
