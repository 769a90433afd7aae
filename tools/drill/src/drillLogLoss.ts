import type { ReplicaStatus } from './drillCluster.ts';

/**
 * Whether MUSTER_LOG lost transactions it had stored: a replica folded (or, alarming, saw the
 * stream report) a sequence past the end of the log the drill read at the end. A replica folds
 * only what the stream acknowledged to it as leader or delivered to it as standby, so this is the
 * server losing acknowledged writes (muster cannot cause it; it can only see it, DESIGN.md §2:
 * hash chain, checkpoints, and replicas that refuse to lead when the log goes backwards). The
 * findings that name log sequences past the end (decisions "past the end" of the log, jobs
 * committed on MUSTER_DECISIONS and not in the log) follow from it. A log that lost writes and was
 * written again can grow past what any replica folded, so the other evidence counts too: a replica
 * that refuses to lead because the log went backwards or no longer backs a published decision, and
 * decisions on MUSTER_DECISIONS the log read after them does not back (past its end, no such event,
 * or a different one: a history written over the one they were published from).
 */
export interface LogLoss {
  /** The last sequence of the log the drill read. */
  logEnd: number;
  /** The highest sequence a replica folded or saw reported (0 when none is past the end). */
  highest: number;
  /**
   * One line per piece of evidence: `s2 folded 137`, `s1 saw 137 (refuses to lead)`, `s3 refuses
   * to lead: MUSTER_DECISIONS holds …`, `12 decisions on MUSTER_DECISIONS the log does not back (…)`.
   */
  examples: string[];
  /** Decisions on MUSTER_DECISIONS that the log read after them does not back. */
  unbackedDecisions: number;
}

// the contradicted findings of drillDecisions that say the log does not back a published decision
const UNBACKED = /: (names log \d+, past the end|no such event in the log|differs from log \d+ event)/;

/** Judges the replicas' final statuses against the log's end, and the decisions the log does not back (`contradicted` findings). */
export function checkLogLoss(statuses: readonly ReplicaStatus[], logEnd: number, contradicted: readonly string[] = []): LogLoss {
  const examples: string[] = [];
  let highest = 0;
  for (const s of statuses) {
    const refusal = s.refusedBecause ?? '';
    // the replica's own alarm names the highest last sequence it saw (LogShrinkWatch's reason)
    const seen = /went backwards: last sequence \d+.*?, seen (\d+)/.exec(refusal);
    const saw = seen === null ? 0 : Number(seen[1]);
    if (s.seq > logEnd) examples.push(`${s.id} folded ${s.seq}`);
    else if (saw > logEnd) examples.push(`${s.id} saw ${saw} (refuses to lead)`);
    else if (seen !== null) examples.push(`${s.id} refuses to lead: MUSTER_LOG went backwards (it saw ${saw}; the log has grown again since)`);
    // the replica found a published decision the log does not back (publishedEvidence)
    else if (refusal.includes('the log lost acknowledged writes')) examples.push(`${s.id} refuses to lead: ${refusal}`);
    highest = Math.max(highest, s.seq > logEnd ? s.seq : 0, saw > logEnd ? saw : 0);
  }
  const unbacked = contradicted.filter((c) => UNBACKED.test(c));
  if (unbacked.length > 0) examples.push(`${unbacked.length} decision(s) on MUSTER_DECISIONS the log read after them does not back (first: ${unbacked[0]})`);
  return { logEnd, highest, examples, unbackedDecisions: unbacked.length };
}
