// Benchmark of decisions at depth (issue 32; not a test: it prints, never asserts). A full cluster of
// 8-slot hosts (one 8-member gang on each, runtime limits 1 to 10 hours) and a deep queue of
// pending gangs of 1 to 32 one-slot members under the v1.1 defaults (EASY backfill), already tried
// once; then the turn after one member completes, after one arrival and after one node joins:
// its time (CPU time of the process, the fastest of `repeats` runs, and that run's wall time), the attempts its session made, and the ratio of that time across depths. A session's
// cost should follow what changed, not the queue's length.
// Run: npx tsx bench/depth.bench.ts [depths=1000,10000,100000] [hosts=1000,10000] [repeats=3]
// (on 10,000 hosts or more the queue is at most BENCH_DEEPEST_ON_LARGE deep when set: a slower machine may need it)
// (each turn runs `repeats` times on the same state and keeps its fastest: the machine may be shared)
// BENCH_QUEUES=1: with queues defined first, a two-level tree (roots r0 and r1, 4 leaves under each,
// each leaf guaranteed an eighth of the CPU, no max, no preemption within a queue), the running
// gangs and the pending ones spread over the 8 leaves (a leader's session through QueueOrder)
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TurnContext, initialState, shardGet, subjects, turn } from '@muster/core';
import type { Input, State, TurnCommand } from '@muster/core';
import { prng } from './realisticLog.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const DEPTHS = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number);
const HOSTS = (process.argv[3] ?? '1000,10000').split(',').map(Number);
const REPEATS = Number(process.argv[4] ?? 3);
/** The deepest queue built on 10,000 hosts or more (unbounded unless set; 100,000 there is built and run in ~6 s on 2 cores; said in the output when it bounds). */
const DEEPEST_ON_LARGE = Number(process.env.BENCH_DEEPEST_ON_LARGE ?? Number.POSITIVE_INFINITY);
const HOUR = 3_600_000;
/** With queues defined (BENCH_QUEUES=1): the 8 leaves the gangs are spread over. */
const LEAVES = process.env.BENCH_QUEUES === '1' ? Array.from({ length: 8 }, (_, i) => `q${i}`) : null;

// seeded (mulberry32), so every run measures the same workload
const random = prng(32);

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function heapBytes(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const host = (i: number) => ({ id: `h${String(i).padStart(6, '0')}`, capacity: { cpu: 8000, memoryMb: 32_768, slots: 8 }, gpus: [] });
const gang = (id: string, tasks: number, limitMs: number, n: number) => ({ id, identity: { user: `u${Math.floor(random() * 16)}`, ...(LEAVES === null ? {} : { queue: LEAVES[n % LEAVES.length] }) }, tasks, resources: { cpu: 1000, memoryMb: 4096 }, runtimeLimitMs: limitMs });
const preemption = { withinQueue: 'never', reclaim: true };

/** The queue tree of BENCH_QUEUES=1 on `hosts` hosts: two roots, four leaves under each, each leaf guaranteed an eighth of the CPU. */
const queueTree = (hosts: number) => [
  ...['r0', 'r1'].map((name) => ({ name, weight: 1, guaranteed: {}, max: {}, preemption })),
  ...LEAVES!.map((name, i) => ({ name, parent: `r${i % 2}`, weight: 1, guaranteed: { cpu: (hosts * 8000) / LEAVES!.length }, max: {}, preemption })),
];

/** A driver of the core's turn, as a leader runs it: one context, the log's state, time that only moves forward. */
class Driver {
  readonly context = new TurnContext();
  state: State = initialState();
  prev: string | null = null;
  seq = 0;
  at = 0;

  run(commands: TurnCommand[]) {
    return turn(this.context, this.state, this.prev, commands, { term: 1, leader: 'bench', at: this.at });
  }

  step(commands: TurnCommand[]): void {
    const result = this.run(commands);
    this.state = result.state;
    this.prev = result.lastHash;
  }

  input(subject: string, body: unknown): Input {
    return { seq: ++this.seq, subject, data: JSON.stringify(body) };
  }
}

interface Measured {
  /** CPU time of this process (user + system): what the turn costs when the machine is shared. */
  ms: number;
  wallMs: number;
  attempted: number;
  notRetried: number;
  events: number;
}

/** The fastest of `REPEATS` runs of one turn (an input, then a session) on the same state. */
function measure(d: Driver, inputs: Input[]): Measured {
  let best: Measured | null = null;
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const result = d.run([{ inputs }, { session: true }]);
    const c = process.cpuUsage(c0);
    const ms = (c.user + c.system) / 1000;
    const wallMs = performance.now() - t0;
    const s = result.session;
    const events = result.transactions.reduce((n, t) => n + t.tx.events.length, 0);
    if (best === null || ms < best.ms) best = { ms, wallMs, attempted: s?.attempted ?? 0, notRetried: s?.notRetried ?? 0, events };
  }
  return best!;
}

type Case = 'done' | 'arrival' | 'node';
const CASES: readonly Case[] = ['done', 'arrival', 'node'];

function depthCase(hosts: number, depth: number): { perJob: number; times: Record<Case, Measured> } {
  const d = new Driver();
  d.step([{ start: true }]);
  if (LEAVES !== null) d.step([{ inputs: queueTree(hosts).map((q) => d.input(`muster.in.queue.${q.name}.set`, q)) }]);
  d.step([{ inputs: Array.from({ length: hosts }, (_, i) => d.input(subjects.nodeInput(host(i).id, 'register'), host(i))) }]);
  // the cluster full: an 8-member gang on each host
  d.step([{ inputs: Array.from({ length: hosts }, (_, i) => d.input(subjects.submit, gang(`run${i}`, 8, HOUR * (1 + Math.floor(random() * 10)), i))) }]);
  d.step([{ session: true }]);
  const before = heapBytes();
  d.at = 1000;
  const sizes = [1, 1, 2, 4, 8, 16, 32];
  d.step([{ inputs: Array.from({ length: depth }, (_, i) => d.input(subjects.submit, gang(`p${i}`, sizes[Math.floor(random() * sizes.length)]!, HOUR * (1 + Math.floor(random() * 4)), i))) }]);
  const perJob = (heapBytes() - before) / depth;
  // every pending gang tried once
  d.at = 2000;
  d.step([{ session: true }]);
  d.at = 3000;
  const running = shardGet(d.state.jobs, 'run0')!;
  const inputs: Record<Case, Input[]> = {
    done: [d.input(subjects.nodeInput(running.members[0]!.node, 'done'), { jobId: 'run0', member: 0, ok: true })],
    arrival: [d.input(subjects.submit, gang('new', 4, HOUR, 0))],
    node: [d.input(subjects.nodeInput(host(hosts).id, 'register'), host(hosts))],
  };
  const times = {} as Record<Case, Measured>;
  for (const c of CASES) times[c] = measure(d, inputs[c]);
  return { perJob, times };
}

function main(): void {
  console.log(`muster depth benchmark${LEAVES === null ? '' : ' with queues (8 leaves)'}: pending depths ${DEPTHS.map((n) => fmt(n)).join(', ')} on ${HOSTS.map((n) => fmt(n)).join(' and ')} hosts; Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${availableParallelism()} CPUs`);
  for (const hosts of HOSTS) {
    const rows: { depth: number; perJob: number; times: Record<Case, Measured> }[] = [];
    for (const asked of DEPTHS) {
      const depth = hosts >= 10_000 ? Math.min(asked, DEEPEST_ON_LARGE) : asked;
      if (depth < asked) console.log(`(${fmt(asked)} pending on ${fmt(hosts)} hosts scaled down to ${fmt(depth)}: BENCH_DEEPEST_ON_LARGE)`);
      const t0 = performance.now();
      const r = depthCase(hosts, depth);
      rows.push({ depth, ...r });
      const cells = CASES.map((c) => `${c} ${fmt(r.times[c].ms, 1)} ms CPU, ${fmt(r.times[c].wallMs, 1)} ms wall (${fmt(r.times[c].attempted)} tried, ${fmt(r.times[c].notRetried)} not, ${fmt(r.times[c].events)} events)`);
      console.log(`${fmt(hosts)} hosts, ${fmt(depth)} pending: ${cells.join('; ')}; ${r.perJob > 0 ? `${fmt(r.perJob)} bytes per pending job` : 'bytes per pending job not measurable here (the heap shrank meanwhile: the session before freed more than the queue took)'}; case built and run in ${fmt((performance.now() - t0) / 1000, 1)} s`);
    }
    const first = rows[0]!;
    const last = rows.at(-1)!;
    console.log(`  ${fmt(hosts)} hosts, time at ${fmt(last.depth)} over time at ${fmt(first.depth)} pending: ${CASES.map((c) => `${c} ${fmt(last.times[c].ms / first.times[c].ms, 2)}×`).join(', ')}`);
  }
}

main();
