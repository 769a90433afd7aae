// npm exec tsx scripts/recordHistory.ts [NAME...] — records golden histories: runs each workload of
// test/audit/workloads.ts against a real scheduler on a nats-server of its own, and writes
// test/fixtures/histories/NAME.jsonl (the log, one {seq, tx} a line), NAME.inputs.jsonl (the inputs
// it ingested) and NAME.expected.json (the leader's final state hash and counts). Re-record only
// for a deliberate change of how logs fold (a new STATE_SCHEMA or event version): see docs/audit.md.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyLines, inputLines } from '@muster/auditor';
import { STATE_SCHEMA, foldTransactions, initialState, stateHash } from '@muster/core';
import { recordWorkload } from '../test/audit/recordWorkload.ts';
import { WORKLOADS } from '../test/audit/workloads.ts';

const DIR = new URL('../test/fixtures/histories/', import.meta.url).pathname;
const names = process.argv.slice(2);
const unknown = names.filter((n) => !WORKLOADS.some((w) => w.name === n));
if (unknown.length > 0) {
  console.error(`unknown workload(s) ${unknown.join(', ')}; known: ${WORKLOADS.map((w) => w.name).join(', ')}`);
  process.exit(2);
}

for (const workload of WORKLOADS.filter((w) => names.length === 0 || names.includes(w.name))) {
  const started = Date.now();
  const { log, inputs, leaderStateHash } = await recordWorkload(workload);
  const replayed = stateHash(foldTransactions(initialState(), log));
  if (replayed !== leaderStateHash) throw new Error(`${workload.name}: replay gives ${replayed} but the leader folded ${leaderStateHash}`);
  const events = log.flatMap((l) => l.tx.events);
  const count = (type: string): number => events.filter((e) => e.type === type).length;
  const expected = {
    name: workload.name,
    description: workload.description,
    stateSchema: STATE_SCHEMA,
    stateHash: leaderStateHash,
    lastSeq: log.at(-1)?.seq ?? 0,
    transactions: log.length,
    events: events.length,
    inputs: inputs.length,
    kinds: Object.fromEntries(['election', 'ingest', 'fact', 'session', 'checkpoint'].map((k) => [k, log.filter((l) => l.tx.kind === k).length])),
    sessions: new Set(log.filter((l) => l.tx.kind === 'session').map((l) => l.tx.session)).size,
    decisions: { committed: count('GangCommitted'), aborted: count('GangAborted') },
  };
  const base = join(DIR, workload.name);
  writeFileSync(`${base}.jsonl`, historyLines(log));
  writeFileSync(`${base}.inputs.jsonl`, inputLines(inputs));
  writeFileSync(`${base}.expected.json`, `${JSON.stringify(expected, null, 2)}\n`);
  console.log(`${workload.name}: ${log.length} transactions, ${events.length} events, ${inputs.length} inputs, state ${leaderStateHash.slice(0, 12)} (${Date.now() - started} ms)`);
}
