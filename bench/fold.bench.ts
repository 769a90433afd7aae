// npm run bench:fold — fold rate of a realistic event mix, every driver of the one recipe (`apply`)
// measured in the same run on the same events: copy-on-write `fold` per batch (replay's path),
// immer's `produce` per batch and per event, and `apply` in place on a private state (the upper
// bound). BENCH_EVENTS (default 400,000) sets the log length, BENCH_PER_EVENT (20,000) how many
// events the slow one-produce-per-event driver folds (from the middle of the log), BENCH_RUNS (3)
// how many timed runs of each fast driver (the best and the median are printed; the immer drivers
// run once). Rates are wall-clock; "per CPU-second" divides by this process's CPU time instead,
// which moves less when other processes share the machine.
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { produce } from 'immer';
import { apply, evolve, fold, initialState, stateHash } from '@muster/core';
import type { SchedulerEvent, State } from '@muster/core';
import { realisticEvents } from './realisticLog.ts';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 400_000);
const PER_EVENT = Math.min(Number(process.env.BENCH_PER_EVENT ?? 20_000), Math.floor(TOTAL / 2));
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const BATCH = 1000;

// a full collection before each run, so that one run's garbage is not collected on another's time
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

interface Result {
  /** Hash of the state the driver reached (the states are dropped: a retained state would make
   * every later run's full collections slower). */
  hash: string;
  /** Best and median wall-clock rate, events/s. */
  best: number;
  median: number;
  /** Best rate per CPU-second of this process. */
  cpuBest: number;
}

const n = (x: number): string => Math.round(x).toLocaleString('en-US');

function measure(label: string, events: number, runs: number, run: () => State): Result {
  const rates: number[] = [];
  const cpuRates: number[] = [];
  let hash = '';
  for (let r = 0; r < runs; r++) {
    collect();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = run();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    rates.push(events / (ms / 1000));
    cpuRates.push(events / ((used.user + used.system) / 1e6));
    const h = stateHash(result);
    if (hash !== '' && h !== hash) throw new Error(`${label}: two runs reached different states`);
    hash = h;
  }
  rates.sort((a, b) => b - a);
  const result = { hash, best: rates[0]!, median: rates[Math.floor((rates.length - 1) / 2)]!, cpuBest: Math.max(...cpuRates) };
  const spread = runs > 1 ? `best of ${runs} (median ${n(result.median)})` : '1 run';
  console.log(`${label.padEnd(38)} ${n(events).padStart(9)} events ${n(result.best).padStart(11)} events/s  ${spread}; ${n(result.cpuBest)} per CPU-second`);
  return result;
}

function batches(events: readonly SchedulerEvent[]): SchedulerEvent[][] {
  const out: SchedulerEvent[][] = [];
  for (let i = 0; i < events.length; i += BATCH) out.push(events.slice(i, i + BATCH));
  return out;
}

const events = realisticEvents(TOTAL);
const chunks = batches(events);
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`fold benchmark: ${n(TOTAL)} events (10,000 nodes, then whole gang lifecycles), node ${process.version}, ${availableParallelism()} CPUs, load average ${load()}`);

const inPlace = (): State => {
  const s = initialState();
  for (const e of events) apply(s, e);
  return s;
};
const foldBatches = (): State => {
  let s: State = initialState();
  for (const chunk of chunks) s = fold(s, chunk);
  return s;
};

// warm-up: a whole pass of the fast drivers (a long-lived replica runs optimised code), a little
// of the immer ones
foldBatches();
inPlace();
{
  let s = fold(initialState(), events.slice(0, 20_000));
  s = produce(s, (draft) => {
    for (const e of events.slice(20_000, 21_000)) apply(draft, e);
  });
  for (const e of events.slice(21_000, 21_200)) s = evolve(s, e);
}

const plain = measure('apply in place on a private state', TOTAL, RUNS, inPlace);
const folded = measure(`copy-on-write fold per batch of ${BATCH}`, TOTAL, RUNS, foldBatches);
const whole = measure('copy-on-write fold of the whole log', TOTAL, RUNS, () => fold(initialState(), events));
const immer = measure(`one immer produce per batch of ${BATCH}`, TOTAL, 1, () => {
  let s: State = initialState();
  for (const chunk of chunks) {
    s = produce(s, (draft) => {
      for (const e of chunk) apply(draft, e);
    });
  }
  return s;
});

// one produce (or fold) per event is slow: each folds PER_EVENT events from the middle of the log,
// on the state the batch driver had reached there, checked against a fold of the same events
const start = Math.floor(TOTAL / 2 / BATCH) * BATCH;
const middle = fold(initialState(), events.slice(0, start));
const segment = events.slice(start, start + PER_EVENT);
const perEvent = measure('one immer produce per event', PER_EVENT, 1, () => {
  let s = middle;
  for (const e of segment) s = evolve(s, e);
  return s;
});
const foldPerEvent = measure('one copy-on-write fold per event', PER_EVENT, 1, () => {
  let s = middle;
  for (const e of segment) s = fold(s, [e]);
  return s;
});

const finalHashes = new Set([plain.hash, folded.hash, whole.hash, immer.hash]);
const same = finalHashes.size === 1 && perEvent.hash === stateHash(fold(middle, segment)) && foldPerEvent.hash === perEvent.hash;
const x = (a: number, b: number): string => `${(a / b).toFixed(1)}x`;
console.log(`same state from every driver: ${same ? 'yes' : 'NO'} (${[...finalHashes].map((h) => h.slice(0, 12)).join(', ')})`);
console.log(`fold per batch vs one produce per event: ${x(folded.best, perEvent.best)}; vs one produce per batch: ${x(folded.best, immer.best)}; vs apply in place: ${(folded.best / plain.best).toFixed(2)}x; fold vs produce, one event each: ${x(foldPerEvent.best, perEvent.best)}`);
console.log(`goal for the batch path, 1,000,000 events/s: ${folded.best >= 1_000_000 ? 'met' : 'not met'} (${n(folded.best)} events/s); load average now ${load()}`);
if (!same) process.exitCode = 1;
