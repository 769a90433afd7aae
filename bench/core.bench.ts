// Benchmark of the placement engine and scheduling sessions (not a test: it prints, never asserts).
// 10,000 heterogeneous hosts (GPU nodes with 8 devices in two NVLink domains, CPU nodes of two
// sizes, labels zone/gpu_model/kind), 50,000 mixed gangs (1 to 64 members, every policy, some
// with select, some with several roles), fed through the real ingest and folded like the leader
// does; then one scheduling session over everything, and churn rounds (completions, then a session).
// Rates are given per wall-clock second and per CPU-second of this process (the second is what the
// code costs when the machine is shared); each session runs `repeats` times on the same state
// (it is deterministic) and every attempt keeps its fastest time, so the latency percentiles do not
// count time the process spent descheduled.
// Run: npx tsx bench/core.bench.ts [hosts=10000] [gangs=50000] [seed=42] [churn rounds=2] [repeats=3]
// (BENCH_ONLY=topology, queues or elastic: only that case; BENCH_TOPOLOGY_MODES, BENCH_TOPOLOGY_ROUNDS, BENCH_QUEUE_ROUNDS, BENCH_ELASTIC_ROUNDS)
import { createHash } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Deadlines, fold, ingest, initialState, runSession, shardEntriesSorted } from '@muster/core';
import type { AttemptInfo, SchedulerEvent, SessionStats, State } from '@muster/core';
import { HostIndexCache, freshIndexFromState } from '@muster/core/testing';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const HOSTS = Number(process.argv[2] ?? 10_000);
const GANGS = Number(process.argv[3] ?? 50_000);
let seed = Number(process.argv[4] ?? 42);
const ROUNDS = Number(process.argv[5] ?? 2);
const REPEATS = Number(process.argv[6] ?? 3);

// mulberry32: a seeded generator, so every run measures the same workload
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const chance = (p: number): boolean => random() < p;

const ZONES = ['a', 'b', 'c', 'd'];

function hostSpec(i: number): Record<string, unknown> {
  const id = `h${String(i).padStart(5, '0')}`;
  const zone = ZONES[Math.floor(i / 4) % ZONES.length]!;
  if (i % 4 === 0) {
    const model = i % 8 === 0 ? 'H100' : 'A100';
    return {
      id,
      labels: { zone, gpu_model: model, kind: 'gpu' },
      capacity: { cpu: 96_000, memoryMb: 786_432, slots: 64 },
      gpus: Array.from({ length: 8 }, (_, g) => ({ id: g, memoryMb: model === 'H100' ? 81_920 : 40_960, model, nvlinkDomain: g < 4 ? 0 : 1 })),
    };
  }
  const big = i % 4 === 1;
  return { id, labels: { zone, kind: 'cpu' }, capacity: { cpu: big ? 64_000 : 32_000, memoryMb: big ? 262_144 : 131_072 }, gpus: [] };
}

function membersOf(): number {
  const r = random();
  if (r < 0.4) return 1;
  if (r < 0.75) return 2 + Math.floor(random() * 7);
  if (r < 0.93) return 9 + Math.floor(random() * 24);
  return r < 0.97 ? 33 + Math.floor(random() * 31) : 64;
}

function gangSpec(i: number): Record<string, unknown> {
  const gpu = chance(0.3);
  let members = membersOf();
  const r = random();
  const policy = r < 0.6 ? 'pack' : r < 0.8 ? 'spread' : 'same-node';
  const gpusPer = gpu ? pick([1, 1, 2, 4, 8]) : 0;
  if (policy === 'same-node') members = Math.min(members, gpu ? Math.max(1, Math.floor(8 / gpusPer)) : 16);
  const resources = {
    cpu: pick([500, 1000, 2000, 4000]),
    memoryMb: pick([1024, 2048, 4096, 8192]),
    gpus: gpusPer,
    gpuMemoryMb: gpu ? pick([0, 0, 40_960, 81_920]) : 0,
  };
  const select = chance(0.3) ? pick([`zone == '${pick(ZONES)}'`, gpu ? "gpu_model == 'H100'" : "kind == 'cpu'", `zone in ('a','b')`]) : '';
  const multi = members > 2 && chance(0.1);
  const body: Record<string, unknown> = {
    id: `g${i}`,
    identity: { user: `u${Math.floor(random() * 50)}`, queue: `q${Math.floor(random() * 5)}`, project: 'p' },
    priority: pick([0, 0, 0, 1, 2]),
    placement: { policy, ...(policy === 'pack' && chance(0.2) ? { ptile: pick([2, 4, 8]) } : {}), gpuLocality: gpu && chance(0.3) },
    select,
  };
  if (multi) {
    body.roles = [
      { name: 'driver', count: 1, resources: { cpu: 4000, memoryMb: 8192 } },
      { name: 'worker', count: members - 1, resources },
    ];
  } else {
    body.tasks = members;
    body.resources = resources;
  }
  return body;
}

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

let inputSeq = 0;
function feed(state: State, inputs: { subject: string; data: string }[]): State {
  let s = state;
  let batch: SchedulerEvent[] = [];
  // ingest reads the state it arrives in; inputs of one batch never depend on each other here
  for (const input of inputs) {
    batch.push(...ingest(s, { seq: ++inputSeq, subject: input.subject, data: input.data }, 0));
    if (batch.length >= 1000) {
      s = fold(s, batch);
      batch = [];
    }
  }
  return batch.length > 0 ? fold(s, batch) : s;
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

interface Timed {
  info: AttemptInfo;
  /** Wall-clock time of the attempt (per-attempt CPU time would cost a system call each). */
  ms: number;
}

function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

interface TimedSession {
  parts: SchedulerEvent[][];
  stats: SessionStats;
  attempts: Timed[];
  totalMs: number;
  totalCpuMs: number;
  setupMs: number;
}

// the deadlines a leader's turn context keeps from one turn to the next
const deadlines = new Deadlines();

// The machine may be shared (CI, other work): a session is deterministic, so it is run `REPEATS`
// times on the same state and each attempt keeps its fastest run, which filters out time spent
// descheduled or in another process's favour; totals are the fastest run's.
function timedSession(state: State, at: number): TimedSession {
  let best: TimedSession | null = null;
  // the index a leader's turn context keeps from one session to the next
  const hosts = new HostIndexCache();
  for (let r = 0; r < REPEATS; r++) {
    const attempts: Timed[] = [];
    const t0 = performance.now();
    const c0 = cpuNow();
    let last = -1;
    let setupMs = 0;
    const result = runSession(state, at, {
      hosts,
      deadlines,
      onAttempt: (info) => {
        const now = performance.now();
        // the first callback also covers the session's setup (index build, ordering): kept apart
        if (last < 0) setupMs = now - t0;
        attempts.push({ info, ms: now - (last < 0 ? t0 : last) });
        last = now;
      },
    });
    const run: TimedSession = { ...result, attempts, totalMs: performance.now() - t0, totalCpuMs: cpuNow() - c0, setupMs };
    if (best === null) best = run;
    else {
      for (let i = 0; i < attempts.length; i++) best.attempts[i]!.ms = Math.min(best.attempts[i]!.ms, attempts[i]!.ms);
      if (run.totalMs < best.totalMs) Object.assign(best, { totalMs: run.totalMs, totalCpuMs: run.totalCpuMs, setupMs: run.setupMs });
    }
  }
  return best!;
}

function report(label: string, run: TimedSession, foldMs: number): void {
  const { stats, attempts, totalMs, totalCpuMs } = run;
  const steady = attempts.slice(1);
  const ms = steady.map((a) => a.ms);
  const big = steady.filter((a) => a.info.members === 64).map((a) => a.ms);
  const bigRan = steady.filter((a) => a.info.members === 64 && a.info.outcome !== 'cached').map((a) => a.ms);
  const loopMs = totalMs - run.setupMs;
  console.log(`\n== ${label}`);
  console.log(`  attempts ${fmt(stats.attempted)} (committed ${fmt(stats.committed)}, failed ${fmt(stats.failed)}, from cache ${fmt(stats.cacheHits)}; not retried ${fmt(stats.notRetried)}), events ${fmt(stats.events)} in ${run.parts.length} part(s)`);
  console.log(`  plans tried ${fmt(stats.plansTried)}, skipped ${fmt(stats.plansSkipped)}, host searches ${fmt(stats.hostSearches)} (tree nodes opened ${fmt(stats.nodeVisits)}, leaves ${fmt(stats.leafVisits)}), aborts written ${fmt(stats.abortsWritten)}`);
  console.log(`  session ${fmt(totalMs, 1)} ms (first attempt incl. setup ${fmt(run.setupMs, 1)} ms), fold of its events by the caller ${fmt(foldMs, 1)} ms`);
  // two builds that make the same decisions print the same digest: an optimisation changed nothing
  console.log(`  events sha256 ${createHash('sha256').update(JSON.stringify(run.parts)).digest('hex').slice(0, 16)}`);
  console.log(`  gang decisions/s ${fmt(stats.attempted / (totalMs / 1000))} wall (excluding setup ${fmt(steady.length / (loopMs / 1000))}), ${fmt(stats.attempted / (totalCpuMs / 1000))} per CPU-second`);
  console.log(`  members placed/s ${fmt(stats.membersPlaced / (totalMs / 1000))} wall, ${fmt(stats.membersPlaced / (totalCpuMs / 1000))} per CPU-second (${fmt(stats.membersPlaced)} members)`);
  const fastest = ms.reduce((a, b) => a + b, 0);
  console.log(`  fastest attempt times sum to ${fmt(fastest)} ms: ${fmt(steady.length / (fastest / 1000))} decisions/s, ${fmt(stats.membersPlaced / (fastest / 1000))} members/s at those times`);
  console.log(`  per attempt (wall): p50 ${fmt(percentile(ms, 50), 3)} ms, p99 ${fmt(percentile(ms, 99), 3)} ms, max ${fmt(percentile(ms, 100), 3)} ms`);
  console.log(`  64-member gangs: ${big.length} attempts, p50 ${fmt(percentile(big, 50), 3)} ms, p99 ${fmt(percentile(big, 99), 3)} ms wall (allocator ran: ${bigRan.length}, p99 ${fmt(percentile(bigRan, 99), 3)} ms)`);
  const committed = steady.filter((a) => a.info.outcome === 'committed').map((a) => a.ms);
  const failed = steady.filter((a) => a.info.outcome === 'failed').map((a) => a.ms);
  console.log(`  by outcome: committed p50 ${fmt(percentile(committed, 50), 3)} / p99 ${fmt(percentile(committed, 99), 3)} ms; failed p50 ${fmt(percentile(failed, 50), 3)} / p99 ${fmt(percentile(failed, 99), 3)} ms`);
}

function main(): void {
  // BENCH_ONLY=topology runs only the topology case (the others take minutes)
  if (process.env.BENCH_ONLY === 'topology') {
    topologyCases();
    return;
  }
  if (process.env.BENCH_ONLY === 'queues') {
    queueCases();
    return;
  }
  if (process.env.BENCH_ONLY === 'elastic') {
    elasticCases();
    return;
  }
  console.log(`muster core benchmark: ${fmt(HOSTS)} hosts, ${fmt(GANGS)} gangs, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${availableParallelism()} CPUs`);
  const h0 = heapMb();
  let state = feed(initialState(), Array.from({ length: HOSTS }, (_, i) => {
    const spec = hostSpec(i);
    return { subject: `muster.in.node.${String(spec.id)}.register`, data: JSON.stringify(spec) };
  }));
  const h1 = heapMb();
  const t0 = performance.now();
  const specs = Array.from({ length: GANGS }, (_, i) => gangSpec(i));
  const sizes = specs.map((g) => (g.tasks as number | undefined) ?? (g.roles as { count: number }[]).reduce((n, r) => n + r.count, 0));
  console.log(`workload: ${fmt(sizes.reduce((a, b) => a + b, 0))} members, ${sizes.filter((n) => n === 64).length} gangs of 64`);
  state = feed(state, specs.map((g) => ({ subject: 'muster.in.submit', data: JSON.stringify(g) })));
  const ingestMs = performance.now() - t0;
  const h2 = heapMb();
  console.log(`memory: ${fmt(((h1 - h0) * 1024 * 1024) / HOSTS)} bytes per host, ${fmt(((h2 - h1) * 1024 * 1024) / GANGS)} bytes per pending job (state only)`);
  console.log(`ingest + fold of ${fmt(GANGS)} submissions: ${fmt(ingestMs)} ms`);
  const ti = performance.now();
  const { index } = freshIndexFromState(state);
  const typed = (xs: readonly ArrayBufferView[]): number => xs.reduce((n, x) => n + x.byteLength, 0);
  const indexBytes = typed([index.cls, index.leaf, index.freeCpu, index.freeMem, index.freeSlots, index.freeGpu, index.key, index.gpuBase, index.gpuFree, index.domBase, index.domFree])
    + index.classes.reduce((n, c) => n + typed([c.maxCpu, c.maxMem, c.maxSlots, c.maxGpu, c.maxDom, c.minKey, c.firstRank, ...c.ratioMax, ...c.cpuLevelKey, ...c.memLevelKey, ...c.jointLevelKey]), 0);
  console.log(`host index build: ${fmt(performance.now() - ti, 1)} ms, ${index.classes.length} host classes, ${fmt(indexBytes / index.ids.length)} bytes per host (session-scoped)`);

  const first = timedSession(state, 1000);
  const tf = performance.now();
  for (const part of first.parts) state = fold(state, part);
  report('session 1: every gang tried once on the empty cluster', first, performance.now() - tf);

  // churn: a share of the running gangs finish (through `done` inputs), then a session retries
  for (let round = 1; round <= ROUNDS; round++) {
    const inputs = fifthDone(state);
    const tc = performance.now();
    state = sequentialFeed(state, inputs);
    const feedMs = performance.now() - tc;
    const run = timedSession(state, 1000 + round * 1000);
    const tr = performance.now();
    for (const part of run.parts) state = fold(state, part);
    report(`churn round ${round}: ${fmt(inputs.length)} completions (ingest+fold ${fmt(feedMs)} ms), then a session`, run, performance.now() - tr);
  }
  const idle = timedSession(state, 10_000);
  console.log(`\nidle: a session with nothing changed wrote ${idle.parts.flat().length} events`);
  reservationCases();
  topologyCases();
  queueCases();
  elasticCases();
}

// Contract v1.1 (DESIGN.md §13): the same seeded workload with every gang of 8 members or more
// elastic (its largest role's minCount half its count) and without: session 1 on the empty cluster
// (where gangs that do not fit whole commit smaller, each after a search for its size) and a
// churn session (a fifth of the running gangs finish; elastic gangs below their count grow in their
// turn). Interleaved rounds (BENCH_ELASTIC_ROUNDS, default 2); the ratio is to the plain workload.
function elasticCases(): void {
  const rounds = Number(process.env.BENCH_ELASTIC_ROUNDS ?? 2);
  const hosts = feed(initialState(), Array.from({ length: HOSTS }, (_, i) => {
    const spec = hostSpec(i);
    return { subject: `muster.in.node.${String(spec.id)}.register`, data: JSON.stringify(spec) };
  }));
  seed = Number(process.argv[4] ?? 42) + 23;
  const specs = Array.from({ length: GANGS }, (_, i) => gangSpec(i));
  const elastic = (g: Record<string, unknown>): Record<string, unknown> => {
    const roles = (g.roles as Record<string, unknown>[] | undefined) ?? [{ name: 'task', count: g.tasks, resources: g.resources }];
    const largest = roles.reduce((a, b) => ((b.count as number) > (a.count as number) ? b : a));
    if ((largest.count as number) < 8) return g;
    const { tasks: _t, resources: _r, ...rest } = g;
    return { ...rest, roles: roles.map((r) => (r === largest ? { ...r, minCount: Math.floor((r.count as number) / 2) } : r)) };
  };
  const states = new Map<string, State>();
  for (const mode of ['plain', 'elastic'] as const) {
    states.set(mode, feed(hosts, specs.map((g) => ({ subject: 'muster.in.submit', data: JSON.stringify(mode === 'plain' ? g : elastic(g)) }))));
  }
  console.log(`\nelastic: ${fmt(HOSTS)} hosts, ${fmt(GANGS)} gangs, plain vs every gang of 8 or more elastic (half its largest role), ${rounds} interleaved round(s)`);
  type Times = RoundTimes & { grown: number; committed: number };
  const best = new Map<string, Times>();
  for (let round = 1; round <= rounds; round++) {
    const times = new Map<string, Times>();
    for (const [mode, built] of states) {
      let state = built;
      const first = timedSession(state, 1000);
      for (const part of first.parts) state = fold(state, part);
      report(`elastic ${mode}, round ${round}, session 1`, first, 0);
      seed = Number(process.argv[4] ?? 42) + 29;
      const inputs = fifthDone(state);
      state = sequentialFeed(state, inputs);
      const churn = timedSession(state, 60_000);
      report(`elastic ${mode}, round ${round}, churn: ${fmt(inputs.length)} completions, then a session; ${fmt(churn.stats.grown)} gangs grown`, churn, 0);
      const t = { first: first.totalMs, firstCpu: first.totalCpuMs, churn: churn.totalMs, churnCpu: churn.totalCpuMs, grown: churn.stats.grown, committed: first.stats.committed };
      times.set(mode, t);
      keepFastest(best, mode, t);
    }
    printElastic(`round ${round}`, times);
  }
  printElastic(`fastest of ${rounds} round(s)`, best);
}

function printElastic(label: string, times: ReadonlyMap<string, RoundTimes & { grown: number; committed: number }>): void {
  const plain = times.get('plain');
  console.log(`\nelastic, same workload, ${label} (session wall ms and CPU ms, ratio to plain):`);
  for (const [mode, t] of times) {
    const r = (x: number, y: number | undefined): string => (y === undefined ? '' : ` (${(x / y).toFixed(2)}x)`);
    console.log(`  ${mode.padEnd(7)}: session 1 ${fmt(t.first)} ms${r(t.first, plain?.first)}, CPU ${fmt(t.firstCpu)} ms${r(t.firstCpu, plain?.firstCpu)}, ${fmt(t.committed)} committed; `
      + `churn ${fmt(t.churn)} ms${r(t.churn, plain?.churn)}, CPU ${fmt(t.churnCpu)} ms${r(t.churnCpu, plain?.churnCpu)}, ${fmt(t.grown)} grown`);
  }
}
// Contract v1.1 (DESIGN.md §12): the same seeded workload with every job in one queue (none
// defined: the implicit default queue) and in 20 queues (4 teams of 4 leaves, a two-level tree),
// each team guaranteed a quarter of the cluster's CPU, memory and GPUs and each leaf a sixteenth,
// reclaim on everywhere and lower-priority preemption within half the leaves. The fourth team's
// gangs arrive only after the first session, so the other three borrow its share, and its gangs
// in the churn session (a fifth of the running gangs finish) reclaim it by preemption. Interleaved
// rounds (BENCH_QUEUE_ROUNDS, default 2); the ratio is to the single queue of the same round.
function queueCases(): void {
  const rounds = Number(process.env.BENCH_QUEUE_ROUNDS ?? 2);
  const hosts = feed(initialState(), Array.from({ length: HOSTS }, (_, i) => {
    const spec = hostSpec(i);
    return { subject: `muster.in.node.${String(spec.id)}.register`, data: JSON.stringify(spec) };
  }));
  const cap = hosts.capacity;
  const share = (n: number) => ({ cpu: Math.floor(cap.cpu / n), memoryMb: Math.floor(cap.memoryMb / n), gpus: Math.floor(cap.gpus / n) });
  const tree: Record<string, unknown>[] = [];
  for (let t = 0; t < 4; t++) {
    tree.push({ name: `team${t}`, guaranteed: share(4) });
    for (let l = 0; l < 4; l++) tree.push({ name: `team${t}-${l}`, parent: `team${t}`, guaranteed: share(16), preemption: { withinQueue: l % 2 === 0 ? 'lower-priority' : 'never', reclaim: true } });
  }
  seed = Number(process.argv[4] ?? 42) + 17;
  const specs = Array.from({ length: GANGS }, (_, i) => gangSpec(i));
  const leafOf = (i: number): string => `team${i % 4}-${Math.floor(i / 4) % 4}`;
  const late = (i: number): boolean => i % 4 === 3;
  const states = new Map<string, { first: State; later: { subject: string; data: string }[] }>();
  for (const mode of ['one', 'queues'] as const) {
    const queued = specs.map((g, i) => (mode === 'one' ? g : { ...g, identity: { ...(g.identity as Record<string, unknown>), queue: leafOf(i) } }));
    let state = mode === 'one' ? hosts : sequentialFeed(hosts, tree.map((q) => ({ subject: `muster.in.queue.${String(q.name)}.set`, data: JSON.stringify(q) })));
    state = feed(state, queued.filter((_, i) => !late(i)).map((g) => ({ subject: 'muster.in.submit', data: JSON.stringify(g) })));
    states.set(mode, { first: state, later: queued.filter((_, i) => late(i)).map((g) => ({ subject: 'muster.in.submit', data: JSON.stringify(g) })) });
  }
  console.log(`\nqueues: ${fmt(HOSTS)} hosts, ${fmt(GANGS)} gangs (a quarter arriving after session 1), one queue vs 20 queues in a two-level tree with preemption, ${rounds} interleaved round(s)`);
  type Times = { first: number; firstCpu: number; churn: number; churnCpu: number; preempted: number };
  const best = new Map<string, Times>();
  for (let round = 1; round <= rounds; round++) {
    const times = new Map<string, Times>();
    for (const [mode, built] of states) {
      let state = built.first;
      const first = timedSession(state, 1000);
      for (const part of first.parts) state = fold(state, part);
      report(`queues ${mode}, round ${round}, session 1: three quarters of the gangs on the empty cluster`, first, 0);
      seed = Number(process.argv[4] ?? 42) + 19;
      const inputs = [...built.later, ...fifthDone(state)];
      state = sequentialFeed(state, inputs);
      const churn = timedSession(state, 60_000);
      report(`queues ${mode}, round ${round}, churn: the last quarter arrives, ${fmt(inputs.length - built.later.length)} completions, then a session; ${fmt(churn.stats.preemptions)} preemptions stopped ${fmt(churn.stats.preempted)} gangs, ${fmt(churn.stats.quotaRefused)} quota refusals`, churn, 0);
      const t = { first: first.totalMs, firstCpu: first.totalCpuMs, churn: churn.totalMs, churnCpu: churn.totalCpuMs, preempted: churn.stats.preempted };
      times.set(mode, t);
      keepFastest(best, mode, t);
    }
    printQueues(`round ${round}`, times);
  }
  printQueues(`fastest of ${rounds} round(s)`, best);
}

function printQueues(label: string, times: ReadonlyMap<string, { first: number; firstCpu: number; churn: number; churnCpu: number; preempted: number }>): void {
  const one = times.get('one');
  console.log(`\nqueues, same workload, ${label} (session wall ms and CPU ms, ratio to one queue; goal <= 1.5):`);
  for (const [mode, t] of times) {
    const r = (x: number, y: number | undefined): string => (y === undefined ? '' : ` (${(x / y).toFixed(2)}x)`);
    console.log(`  ${mode.padEnd(6)}: session 1 ${fmt(t.first)} ms${r(t.first, one?.first)}, CPU ${fmt(t.firstCpu)} ms${r(t.firstCpu, one?.firstCpu)}; `
      + `churn ${fmt(t.churn)} ms${r(t.churn, one?.churn)}, CPU ${fmt(t.churnCpu)} ms${r(t.churnCpu, one?.churnCpu)}, ${fmt(t.preempted)} gangs preempted`);
  }
}


// Contract v1.1 (DESIGN.md §13): the hosts in 40 racks (label `rack`, consecutive ids per rack),
// the same seeded workload without topology, with `placement.topology {key: "rack", mode:
// "required"}` on every gang, and with mode "preferred"; the first session on the empty cluster and
// a churn session (a fifth of the running gangs finish), timed as above, in interleaved rounds
// (BENCH_TOPOLOGY_ROUNDS, default 2) so that a shared machine's load falls on every mode alike.
// Each mode's state is built once (states are immutable); the ratio is to the mode "none" of the
// same round, and the summary takes each mode's fastest round.
function topologyCases(): void {
  const RACKS = 40;
  const modes = (process.env.BENCH_TOPOLOGY_MODES ?? 'none,required,preferred').split(',') as ('none' | 'required' | 'preferred')[];
  const rounds = Number(process.env.BENCH_TOPOLOGY_ROUNDS ?? 2);
  const rackOf = (i: number): string => `r${String(Math.floor((i * RACKS) / HOSTS)).padStart(2, '0')}`;
  const hosts = feed(initialState(), Array.from({ length: HOSTS }, (_, i) => {
    const spec = hostSpec(i);
    const racked = { ...spec, labels: { ...(spec.labels as Record<string, string>), rack: rackOf(i) } };
    return { subject: `muster.in.node.${String(spec.id)}.register`, data: JSON.stringify(racked) };
  }));
  console.log(`
topology: ${fmt(HOSTS)} hosts in ${RACKS} racks of ${fmt(HOSTS / RACKS)}, ${fmt(GANGS)} gangs, modes ${modes.join(', ')}, ${rounds} interleaved round(s)`);
  const states = new Map<string, State>();
  for (const mode of modes) {
    seed = Number(process.argv[4] ?? 42) + 11;
    const specs = Array.from({ length: GANGS }, (_, i) => {
      const g = gangSpec(i);
      if (mode === 'none') return g;
      return { ...g, placement: { ...(g.placement as Record<string, unknown>), topology: { key: 'rack', mode } } };
    });
    states.set(mode, feed(hosts, specs.map((g) => ({ subject: 'muster.in.submit', data: JSON.stringify(g) }))));
  }
  type Times = { first: number; firstCpu: number; churn: number; churnCpu: number; committed: number };
  const best = new Map<string, Times>();
  for (let round = 1; round <= rounds; round++) {
    const times = new Map<string, Times>();
    for (const mode of modes) {
      let state = states.get(mode)!;
      const first = timedSession(state, 1000);
      for (const part of first.parts) state = fold(state, part);
      report(`topology ${mode}, round ${round}, session 1: every gang tried once on the empty racked cluster`, first, 0);
      seed = Number(process.argv[4] ?? 42) + 13;
      const inputs = fifthDone(state);
      state = sequentialFeed(state, inputs);
      const churn = timedSession(state, 60_000);
      report(`topology ${mode}, round ${round}, churn: ${fmt(inputs.length)} completions, then a session`, churn, 0);
      const t = { first: first.totalMs, firstCpu: first.totalCpuMs, churn: churn.totalMs, churnCpu: churn.totalCpuMs, committed: first.stats.committed };
      times.set(mode, t);
      keepFastest(best, mode, t);
    }
    printTopology(`round ${round}`, times);
  }
  printTopology(`fastest of ${rounds} round(s)`, best);
}

/** The members of a fifth of the running gangs (seeded), as the `done` inputs their agents would send. */
function fifthDone(state: State): { subject: string; data: string }[] {
  const inputs: { subject: string; data: string }[] = [];
  for (const [id, j] of shardEntriesSorted(state.jobs).filter(([, job]) => job.status === 'running').filter(() => chance(0.2))) {
    j.members.forEach((m, member) => {
      if (m !== null && !m.done) inputs.push({ subject: `muster.in.node.${m.node}.done`, data: JSON.stringify({ jobId: id, member, ok: true }) });
    });
  }
  return inputs;
}

/** Session times of one mode in one round. */
interface RoundTimes {
  first: number;
  firstCpu: number;
  churn: number;
  churnCpu: number;
}

/** Keeps each mode's fastest times over the rounds (the other fields from the latest round). */
function keepFastest<T extends RoundTimes>(best: Map<string, T>, mode: string, t: T): void {
  const was = best.get(mode);
  best.set(mode, was === undefined ? t : {
    ...t, first: Math.min(was.first, t.first), firstCpu: Math.min(was.firstCpu, t.firstCpu), churn: Math.min(was.churn, t.churn), churnCpu: Math.min(was.churnCpu, t.churnCpu),
  });
}

function printTopology(label: string, times: ReadonlyMap<string, { first: number; firstCpu: number; churn: number; churnCpu: number; committed: number }>): void {
  const off = times.get('none');
  console.log(`
topology, same workload, ${label} (session wall ms and CPU ms, ratio to no topology; goal for required <= 1.5):`);
  for (const [mode, t] of times) {
    const r = (x: number, y: number | undefined): string => (y === undefined ? '' : ` (${(x / y).toFixed(2)}x)`);
    console.log(`  ${mode.padEnd(9)}: session 1 ${fmt(t.first)} ms${r(t.first, off?.first)}, CPU ${fmt(t.firstCpu)} ms${r(t.firstCpu, off?.firstCpu)}, ${fmt(t.committed)} committed; `
      + `churn ${fmt(t.churn)} ms${r(t.churn, off?.churn)}, CPU ${fmt(t.churnCpu)} ms${r(t.churnCpu, off?.churnCpu)}`);
  }
}

// Contract v1.1 (DESIGN.md §11): the same workload, each gang with a runtime limit, on a log whose
// policy has reserveDepth 0 (reservations off), 1 and 16: the first session on the empty cluster,
// then a churn session (a fifth of the running gangs finish), each timed as above.
function reservationCases(): void {
  const depths = (process.env.BENCH_RESERVE_DEPTHS ?? '0,1,16').split(',').map(Number);
  const totals = new Map<number, { first: number; churn: number }>();
  for (const depth of depths) {
    seed = Number(process.argv[4] ?? 42) + 7;
    let state = fold(initialState(), [{ type: 'PolicySet', policy: { reserveDepth: depth, assumedRuntimeMs: 3_600_000 } }]);
    state = feed(state, Array.from({ length: HOSTS }, (_, i) => {
      const spec = hostSpec(i);
      return { subject: `muster.in.node.${String(spec.id)}.register`, data: JSON.stringify(spec) };
    }));
    const specs = Array.from({ length: GANGS }, (_, i) => ({ ...gangSpec(i), runtimeLimitMs: pick([600_000, 1_800_000, 3_600_000, 7_200_000]) }));
    state = feed(state, specs.map((g) => ({ subject: 'muster.in.submit', data: JSON.stringify(g) })));
    const first = timedSession(state, 1000);
    for (const part of first.parts) state = fold(state, part);
    report(`reserveDepth ${depth}, session 1: every gang (with a runtime limit) tried once on the empty cluster; ${fmt(first.stats.reserved)} reserved, ${fmt(first.stats.backfillRefused)} held back`, first, 0);
    const inputs = fifthDone(state);
    state = sequentialFeed(state, inputs);
    const churn = timedSession(state, 60_000);
    report(`reserveDepth ${depth}, churn: ${fmt(inputs.length)} completions, then a session; ${fmt(churn.stats.reserved)} reserved, ${fmt(churn.stats.backfillRefused)} held back`, churn, 0);
    totals.set(depth, { first: first.totalMs, churn: churn.totalMs });
  }
  const off = totals.get(0);
  if (off === undefined) return;
  console.log('\nreservations, same workload (session ms, and the ratio to reserveDepth 0; goal <= 1.5):');
  for (const [depth, t] of totals) {
    console.log(`  reserveDepth ${String(depth).padStart(2)}: session 1 ${fmt(t.first)} ms (${(t.first / off.first).toFixed(2)}x), churn ${fmt(t.churn)} ms (${(t.churn / off.churn).toFixed(2)}x)`);
  }
}

// completions depend on the state they arrive in (the last member's release finishes the job)
function sequentialFeed(state: State, inputs: { subject: string; data: string }[]): State {
  let s = state;
  for (const input of inputs) s = fold(s, ingest(s, { seq: ++inputSeq, subject: input.subject, data: input.data }, 0));
  return s;
}

main();
