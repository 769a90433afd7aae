// npm run bench:cli — how long `muster --help` and `muster jobs --help` take to start and exit,
// against a bare `node -e 0`, in the same run, alternating so that the machine's load falls on
// all alike. BENCH_RUNS (default 20) runs of each; the median and the best wall times are printed,
// and the ratio of the medians (the bound: --help within 4x a bare Node.js start).
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { cliEntry } from '@muster/stack';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 20));
const CASES: [string, string[]][] = [
  ['node -e 0', ['-e', '0']],
  ['muster --help', [cliEntry(), '--help']],
  ['muster jobs --help', [cliEntry(), 'jobs', '--help']],
];

function wallMs(args: string[]): number {
  const start = performance.now();
  const run = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}`);
  return performance.now() - start;
}

const times = CASES.map(() => [] as number[]);
for (let i = 0; i < RUNS; i++) CASES.forEach(([, args], c) => times[c]!.push(wallMs(args)));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${RUNS} runs each, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)}`);
const base = median(times[0]!);
CASES.forEach(([name], c) => {
  const m = median(times[c]!);
  console.log(`${name.padEnd(20)} median ${m.toFixed(0).padStart(5)} ms  best ${Math.min(...times[c]!).toFixed(0).padStart(5)} ms  ${(m / base).toFixed(2)}x node -e 0`);
});
