// npm run bench:fold — fold rate of a realistic event mix, every driver of the one recipe (`apply`)
// measured in the same run on the same events: copy-on-write `fold` per batch (replay's path),
// immer's `produce` per batch and per event, and `apply` in place on a private state (the upper
// bound). BENCH_EVENTS (default 400,000) sets the log length, BENCH_PER_EVENT (20,000) how many
// events the slow one-produce-per-event driver folds, from the middle of the log.
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { produce } from 'immer';
import { apply, evolve, fold, initialState, stateHash } from '@muster/core';
import type { SchedulerEvent, State } from '@muster/core';
import { realisticEvents } from './realisticLog.ts';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 400_000);
const PER_EVENT = Math.min(Number(process.env.BENCH_PER_EVENT ?? 20_000), Math.floor(TOTAL / 2));
const BATCH = 1000;

// a full collection between drivers, so that one driver's garbage is not collected on another's time
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

interface Timing {
  /** Hash of the state the driver reached (the state itself is dropped: a retained state would
   * make every later driver's full collections slower). */
  hash: string;
  rate: number;
  cpuRate: number;
}

function time(label: string, events: number, run: () => State): Timing {
  collect();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = run();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const rate = events / (ms / 1000);
  const cpuRate = events / ((used.user + used.system) / 1e6);
  const n = (x: number): string => Math.round(x).toLocaleString('en-US');
  console.log(`${label.padEnd(38)} ${n(events).padStart(9)} events ${ms.toFixed(0).padStart(7)} ms ${n(rate).padStart(11)} events/s  (${n(cpuRate)} per CPU-second)`);
  return { hash: stateHash(result), rate, cpuRate };
}

function batches(events: readonly SchedulerEvent[]): SchedulerEvent[][] {
  const out: SchedulerEvent[][] = [];
  for (let i = 0; i < events.length; i += BATCH) out.push(events.slice(i, i + BATCH));
  return out;
}

const events = realisticEvents(TOTAL);
const chunks = batches(events);
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`fold benchmark: ${TOTAL.toLocaleString('en-US')} events (10,000 nodes, then whole gang lifecycles), node ${process.version}, ${availableParallelism()} CPUs, load average ${load()}`);

// warm the JIT on every driver
for (let i = 0; i < 3; i++) {
  let s = fold(initialState(), events.slice(0, 20_000));
  s = produce(s, (draft) => {
    for (const e of events.slice(20_000, 21_000)) apply(draft, e);
  });
  for (const e of events.slice(21_000, 21_200)) s = evolve(s, e);
}

const plain = time('apply in place on a private state', TOTAL, () => {
  const s = initialState();
  for (const e of events) apply(s, e);
  return s;
});
const folded = time(`copy-on-write fold per batch of ${BATCH}`, TOTAL, () => {
  let s: State = initialState();
  for (const chunk of chunks) s = fold(s, chunk);
  return s;
});
const whole = time('copy-on-write fold of the whole log', TOTAL, () => fold(initialState(), events));
const immer = time(`one immer produce per batch of ${BATCH}`, TOTAL, () => {
  let s: State = initialState();
  for (const chunk of chunks) {
    s = produce(s, (draft) => {
      for (const e of chunk) apply(draft, e);
    });
  }
  return s;
});

// one produce per event is slow: it folds PER_EVENT events from the middle of the log, on the
// state the batch driver had reached there, and is checked against a fold of the same events
const start = Math.floor(TOTAL / 2 / BATCH) * BATCH;
const middle = fold(initialState(), events.slice(0, start));
const segment = events.slice(start, start + PER_EVENT);
const perEvent = time('one immer produce per event', PER_EVENT, () => {
  let s = middle;
  for (const e of segment) s = evolve(s, e);
  return s;
});

const finalHashes = new Set([plain.hash, folded.hash, whole.hash, immer.hash]);
const same = finalHashes.size === 1 && perEvent.hash === stateHash(fold(middle, segment));
const x = (a: number, b: number): string => `${(a / b).toFixed(1)}x`;
console.log(`same state from every driver: ${same ? 'yes' : 'NO'} (${[...finalHashes].map((h) => h.slice(0, 12)).join(', ')})`);
console.log(`fold per batch vs one produce per event: ${x(folded.rate, perEvent.rate)}; vs one produce per batch: ${x(folded.rate, immer.rate)}; vs apply in place: ${(folded.rate / plain.rate).toFixed(2)}x`);
console.log(`goal for the batch path, 1,000,000 events/s: ${folded.rate >= 1_000_000 ? 'met' : 'not met'} (${Math.round(folded.rate).toLocaleString('en-US')} events/s); load average now ${load()}`);
if (!same) process.exitCode = 1;
