// npm run bench:backlog — how fast a leader ingests behind a backlog, by how many inputs a turn
// takes (`--max-batch-inputs`), each size measured in the same run on its own real nats-server.
// MUSTER_IN holds BENCH_BACKLOG_GANGS submissions before the scheduler starts, on a cluster that
// runs only a few hundred of them at once (no agents: nothing completes), so the pending queue grows
// to tens of thousands while the leader works through its input. Every session tries the pending
// jobs, so each turn costs about a session over the whole queue: fewer, larger turns ingest faster,
// and the longest turn says what a larger batch costs every decision made while it computes.
import { connect, ensureStreams, lastInputSequence, publishInput, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { spawnScheduler, startNatsServer } from '@muster/stack';
import type { SchedulerProcess } from '@muster/stack';
import { line, logShape } from './benchLog.ts';

const GANGS = Number(process.env.BENCH_BACKLOG_GANGS ?? 20_000);
const NODES = Number(process.env.BENCH_BACKLOG_NODES ?? 300);
// 1024 is the default; 256 was it before (docs/drills.md: a backlog at 200 gangs/s never drained)
const BATCHES = (process.env.BENCH_BACKLOG_BATCHES ?? '256,1024,4096').split(',').map(Number);
const TIMEOUT_MS = Number(process.env.BENCH_BACKLOG_TIMEOUT_MS ?? 600_000);
// how a turn's inputs are cut depends on how many arrived while the last one computed: the rounds
// of one size differ, so each size is run this many times, interleaved, and its median reported
const ROUNDS = Number(process.env.BENCH_BACKLOG_ROUNDS ?? 3);

// 16 slots each: a few hundred gangs run at once, the rest wait
const node = (id: string) => ({ id, labels: { zone: 'a' }, capacity: { cpu: 16_000, memoryMb: 65_536, slots: 16 }, gpus: [] });
// a mix of shapes (1–8 members, three sizes), as the drill's workload has
const gang = (i: number) => ({ id: `g${i}`, identity: { user: `u${i % 7}` }, tasks: 1 + (i % 8), resources: { cpu: 500 * (1 + (i % 3)), memoryMb: 1024 } });

interface Drain {
  ms: number;
  inputs: number;
  txs: number;
  sessions: number;
  longestGapMs: number;
}

/** The leader's status, or null when it does not answer as the leader. */
async function leaderStatus(bus: Bus, id: string): Promise<{ lastInputSeq: number } | null> {
  const reply = await bus.request(subjects.replicaStatus(id), '', { timeoutMs: 2_000 }).catch(() => null);
  const status = reply?.json<{ role: string; lastInputSeq: number }>();
  return status?.role === 'leader' ? status : null;
}

/** Fills MUSTER_IN, starts a leader taking `batch` inputs a turn, and times it from its first answer as leader to having ingested every input. */
async function drain(batch: number): Promise<Drain> {
  const server = await startNatsServer();
  const bus = await connect({ servers: server.url, name: 'bench-backlog' });
  let leader: SchedulerProcess | null = null;
  try {
    await ensureStreams(bus, { replicas: 1 });
    for (let i = 0; i < NODES; i++) await publishInput(bus, subjects.nodeInput(`n${i}`, 'register'), node(`n${i}`));
    await Promise.all(Array.from({ length: GANGS }, (_, i) => publishInput(bus, subjects.submit, gang(i), `g${i}:1`)));
    const target = await lastInputSequence(bus);
    leader = spawnScheduler({ id: 'backlog', urls: [server.url], leaseMs: 1000, logLevel: 'warn', maxBatchInputs: batch });
    const deadline = performance.now() + TIMEOUT_MS;
    while ((await leaderStatus(bus, 'backlog')) === null) {
      if (performance.now() > deadline) throw new Error('the scheduler did not lead');
      await new Promise((r) => setTimeout(r, 50));
    }
    const started = performance.now();
    for (;;) {
      const status = await leaderStatus(bus, 'backlog');
      if (status !== null && status.lastInputSeq >= target) break;
      if (performance.now() > deadline) throw new Error(`batch ${batch}: inputs ingested up to ${status?.lastInputSeq ?? '?'} of ${target} within ${TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const ms = performance.now() - started;
    const shape = await logShape(bus, 1);
    return { ms, inputs: target, txs: shape.txs, sessions: shape.sessions, longestGapMs: shape.longestGapMs };
  } finally {
    await leader?.kill();
    await bus.close();
    await server.stop();
  }
}

console.log(`backlog benchmark: node ${process.version}, ${GANGS.toLocaleString('en-US')} gangs queued before the leader starts, ${NODES} nodes of 16 slots, no completions; median of ${ROUNDS} rounds`);
for (const batch of BATCHES) {
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`BENCH_BACKLOG_BATCHES: ${batch} is not a positive integer`);
}
const rounds = new Map<number, Drain[]>(BATCHES.map((b) => [b, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const batch of BATCHES) rounds.get(batch)!.push(await drain(batch));
}
const rate = (d: Drain): number => d.inputs / (d.ms / 1000);
const median = (ds: Drain[]): Drain => [...ds].sort((a, b) => rate(a) - rate(b))[Math.floor(ds.length / 2)]!;
const baseline = median(rounds.get(BATCHES[0]!)!);
for (const batch of BATCHES) {
  const ds = rounds.get(batch)!;
  const d = median(ds);
  const ratio = batch === BATCHES[0] ? 'baseline' : `${(rate(d) / rate(baseline)).toFixed(2)}x of ${BATCHES[0]}`;
  const all = ds.map((r) => Math.round(rate(r)).toLocaleString('en-US')).join(', ');
  line(`${batch} inputs a turn: ingested`, `${Math.round(rate(d)).toLocaleString('en-US')} inputs/s  (${d.inputs.toLocaleString('en-US')} in ${Math.round(d.ms).toLocaleString('en-US')} ms; ${ratio}; rounds ${all})`);
  line(`${batch} inputs a turn: its log (that round)`, `${d.sessions} sessions, ${d.txs} transactions; longest gap between stamps ${Math.round(d.longestGapMs).toLocaleString('en-US')} ms`);
}
