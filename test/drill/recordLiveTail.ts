// npx tsx --conditions=source test/drill/recordLiveTail.ts [OUT]
// Records a live tail for the drill's checker tests (tools/drill/fixtures/liveTail.json.gz): a
// short, saturated drill (far more gangs than its three nodes hold, so the leader is still deciding
// while the drill reads), what the checks read (MUSTER_IN, then MUSTER_DECISIONS, then MUSTER_LOG),
// and, read the old way right after (the log first, then the stream), the pair that raced.
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { lastLogSequence, readDecisions, readLog } from '@muster/bus';
import type { StoredDecision } from '@muster/bus';
import type { LoggedTransaction } from '@muster/core';
import { runDrill } from '@muster/drill';

const out = process.argv[2] ?? 'tools/drill/fixtures/liveTail.json.gz';
let recorded: unknown = null;
const report = await runDrill(
  { durationS: 12, rate: 25, nodes: 3, faults: ['kill-leader'], faultEveryS: 4, seed: 3, settleTimeoutMs: 2_000, logLevel: 'warn' },
  {
    progress: (line) => process.stderr.write(`${line}\n`),
    onRead: async (read, bus) => {
      // the order: the log, then the stream, while the leader goes on deciding
      const raceLog: LoggedTransaction[] = [];
      for await (const l of readLog(bus)) raceLog.push({ seq: l.seq, tx: l.tx });
      // reading 21,000 transactions took long enough for the leader to decide more (the run): wait until it has
      const end = raceLog[raceLog.length - 1]?.seq ?? 0;
      for (let i = 0; i < 50 && (await lastLogSequence(bus)) <= end + 5; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const raceStream: StoredDecision[] = [];
      for await (const m of readDecisions(bus)) raceStream.push(m);
      // and the log again, read after that stream: what the drill now compares it with
      const logAfter: LoggedTransaction[] = [];
      for await (const l of readLog(bus)) logAfter.push({ seq: l.seq, tx: l.tx });
      recorded = { ...read, log: read.log.map((l) => ({ seq: l.seq, tx: l.tx })), race: { log: raceLog, stream: raceStream, logAfter } };
    },
  },
);
if (recorded === null) throw new Error(`the drill read nothing: ${report.error ?? report.failures.join('; ')}`);
writeFileSync(out, gzipSync(JSON.stringify({ faults: report.faults, ...(recorded as object) })));
process.stderr.write(`recorded ${out}: verdict ${report.verdict}\n`);
