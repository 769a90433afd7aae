import type { ReplicaStatus } from './drillCluster.ts';

/**
 * Whether MUSTER_LOG lost transactions it had stored: a replica folded (or, alarming, saw the
 * stream report) a sequence past the end of the log the drill read at the end. A replica folds
 * only what the stream acknowledged to it as leader or delivered to it as standby, so this is the
 * server losing acknowledged writes (muster cannot cause it; it can only see it, DESIGN.md §2:
 * hash chain, checkpoints, and replicas that refuse to lead when the log goes backwards). The
 * findings that name log sequences past the end (decisions "past the end" of the log, jobs
 * committed on MUSTER_DECISIONS and not in the log) follow from it.
 */
export interface LogLoss {
  /** The last sequence of the log the drill read. */
  logEnd: number;
  /** The highest sequence a replica folded or saw reported (0 when none is past the end). */
  highest: number;
  /** One line per replica past the end: `s2 folded 137`, `s1 saw 137 (refuses to lead)`. */
  examples: string[];
}

/** Judges the replicas' final statuses against the log's end. */
export function checkLogLoss(statuses: readonly ReplicaStatus[], logEnd: number): LogLoss {
  const examples: string[] = [];
  let highest = 0;
  for (const s of statuses) {
    // the replica's own alarm names the highest last sequence it saw (LogShrinkWatch's reason)
    const seen = /went backwards: last sequence \d+.*?, seen (\d+)/.exec(s.refusedBecause ?? '');
    const saw = seen === null ? 0 : Number(seen[1]);
    if (s.seq > logEnd) examples.push(`${s.id} folded ${s.seq}`);
    else if (saw > logEnd) examples.push(`${s.id} saw ${saw} (refuses to lead)`);
    highest = Math.max(highest, s.seq > logEnd ? s.seq : 0, saw > logEnd ? saw : 0);
  }
  return { logEnd, highest, examples };
}
