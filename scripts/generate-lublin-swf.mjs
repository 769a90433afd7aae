// Writes a Lublin–Feitelson-style workload in the Standard Workload Format (docs/simulate.md,
// "Real traces: --swf"): node scripts/generate-lublin-swf.mjs [jobs=10000] [procs=256] [seed=7] > lublin_256.swf
// No public trace can be downloaded on this machine, so this is a stand-in with the model's shape,
// not the model's published code: sizes from the model's two-stage log-uniform (serial jobs 24 %,
// powers of two 75 % of the parallel ones), run times from its hyper-gamma over log(seconds) whose
// mix depends on the size, arrivals with a daily cycle, and a requested time rounded up from the
// run time to a value users pick (as real traces show). Seeded (mulberry32): the same file every time.
const JOBS = Number(process.argv[2] ?? 10_000);
const PROCS = Number(process.argv[3] ?? 256);
let s = Number(process.argv[4] ?? 7);
const rand = () => { s |= 0; s = (s + 0x6d2b79f5) | 0; let t = Math.imul(s ^ (s >>> 15), 1 | s); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
// Marsaglia–Tsang gamma (shape a ≥ 1, scale b)
const gamma = (a, b) => {
  const d = a - 1 / 3, c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x, v;
    do { x = normal(); v = 1 + c * x; } while (v <= 0);
    v = v * v * v;
    const u = rand();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v * b;
  }
};
// the model's batch-job parameters (Lublin & Feitelson 2003, table of "batch" jobs)
const SERIAL = 0.24, POW2 = 0.75, ULOW = 0.8, UPROB = 0.86;
const UHI = Math.log2(PROCS), UMED = UHI - 2.5;
const [A1, B1, A2, B2, PA, PB] = [4.2, 0.94, 312, 0.03, -0.0054, 0.78];
const size = () => {
  if (rand() < SERIAL) return 1;
  const u = rand() < UPROB ? ULOW + rand() * (UMED - ULOW) : UMED + rand() * (UHI - UMED);
  const p = rand() < POW2 ? 2 ** Math.round(u) : Math.round(2 ** u);
  return Math.max(1, Math.min(PROCS, p));
};
const runTime = (p) => {
  const short = rand() < Math.min(1, Math.max(0, PA * p + PB));
  return Math.max(1, Math.round(Math.exp(short ? gamma(A1, B1) : gamma(A2, B2))));
};
const CHOICES = [300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200, 86_400, 129_600, 172_800];
const requested = (run) => CHOICES.find((c) => c >= run * (1 + rand())) ?? Math.ceil((run * 1.2) / 3600) * 3600;
// a daily cycle: arrivals thin out at night (hour 0–7) and peak in the afternoon
const rate = (t) => { const h = (t / 3600) % 24; return h < 7 ? 0.35 : h < 12 ? 1.1 : h < 19 ? 1.45 : 0.8; };
const MEAN_GAP = 760;
const lines = [
  '; Version: 2.2',
  `; Computer: a Lublin–Feitelson-style synthetic machine (scripts/generate-lublin-swf.mjs, seed ${process.argv[4] ?? 7})`,
  `; MaxJobs: ${JOBS}`,
  `; MaxRecords: ${JOBS}`,
  `; MaxProcs: ${PROCS}`,
  `; MaxNodes: ${PROCS}`,
  '; Note: fields 3 (wait), 6, 7, 10 and 13-18 are not generated (-1); status 1 (completed); user 1-32',
];
let t = 0;
for (let j = 1; j <= JOBS; j++) {
  t += Math.max(0, Math.round((-Math.log(1 - rand()) * MEAN_GAP) / rate(t)));
  const p = size();
  const run = runTime(p);
  const user = 1 + Math.floor(rand() * 32);
  lines.push([j, t, -1, run, p, -1, -1, p, requested(run), -1, 1, user, -1, -1, 1, 1, -1, -1].join(' '));
}
process.stdout.write(`${lines.join('\n')}\n`);
