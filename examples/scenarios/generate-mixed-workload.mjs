// Writes examples/scenarios/mixed-workload.json (docs/simulate.md, "Comparing reserveDepth 0, 1 and 8"):
// node examples/scenarios/generate-mixed-workload.mjs > examples/scenarios/mixed-workload.json
// A seeded generator (mulberry32, seed 12), so the same file comes out every time.
let s = 12;
const rand = () => { s |= 0; s = (s + 0x6d2b79f5) | 0; let t = Math.imul(s ^ (s >>> 15), 1 | s); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
const H = 3_600_000, MIN = 60_000;
const logUniform = (lo, hi) => Math.round(Math.exp(Math.log(lo) + rand() * (Math.log(hi) - Math.log(lo))));
const roundUp = (ms, step) => Math.ceil(ms / step) * step;
const entries = [];
let t = 0, n = 0;
while (true) {
  t += Math.round(-Math.log(1 - rand()) * 25_000);
  if (t >= 6 * H) break;
  const tasks = 1 + Math.floor(rand() * 4);
  const runMs = logUniform(MIN, 20 * MIN);
  const limit = roundUp(runMs * (1.2 + rand() * 1.8), 5 * MIN);
  const user = `user${1 + Math.floor(rand() * 5)}`;
  entries.push({ at: t, submit: { id: `s${++n}`, identity: { user }, tasks, resources: { cpu: 1000, memoryMb: 2048 }, runtimeLimitMs: limit }, runMs });
}
for (let k = 0; k < 6; k++) {
  const at = Math.round((k + 0.3 + rand() * 0.4) * H);
  const tasks = 32 + 8 * Math.floor(rand() * 3);
  const runMs = roundUp(20 * MIN + rand() * 20 * MIN, 1000);
  entries.push({ at, submit: { id: `gang${k + 1}`, identity: { user: 'train' }, priority: 10, tasks, resources: { cpu: 1000, memoryMb: 2048 }, runtimeLimitMs: roundUp(runMs * 1.5, 5 * MIN) }, runMs });
}
entries.sort((a, b) => a.at - b.at);
const nodes = Array.from({ length: 8 }, (_, i) => ({ id: `h${i + 1}`, capacity: { cpu: 64000, memoryMb: 262144, slots: 8 }, gpus: [] }));
const lines = entries.map((e) => `    ${JSON.stringify(e)}`).join(',\n');
process.stdout.write(`{\n  "nodes": [\n${nodes.map((n) => `    ${JSON.stringify(n)}`).join(',\n')}\n  ],\n  "policy": { "reserveDepth": 1 },\n  "workload": [\n${lines}\n  ]\n}\n`);
