import { idOf, subjects } from '@muster/bus';
import type { StoredDecision } from '@muster/bus';
import { canonicalJson, shardGet } from '@muster/core';
import type { LoggedTransaction, State } from '@muster/core';

/** What the drill's own accounting finds about decisions, in the log and on MUSTER_DECISIONS. */
export interface DecisionFindings {
  /** Accepted jobs with no JobSubmitted in the log. */
  notIngested: string[];
  /** Accepted jobs with no decision (GangCommitted or GangAborted) in the log. */
  undecidedInLog: string[];
  /** Accepted jobs with no decision on MUSTER_DECISIONS. */
  missingOnStream: string[];
  /** Accepted jobs that never got a GangCommitted (every drill job fits, so each must). */
  neverCommitted: string[];
  /** Duplicated decisions: a second commit of a running job, a msg id stored twice, more commits on the stream than in the log. */
  duplicated: string[];
  /** Contradicted decisions: a commit and a final abort for one job, two bodies under one msg id, a stream message unlike its log event. */
  contradicted: string[];
  decisionsInLog: number;
  decisionsOnStream: number;
}

type JobPhase = 'pending' | 'committed' | 'finished' | 'final';

/**
 * Checks every accepted job reached a decision in the log and on the stream, that no job was
 * committed twice without a requeue between, that no job was both committed and finally aborted,
 * and that every message on MUSTER_DECISIONS is unique under its msg id and equal to the log
 * event it names (`muster:<logSeq>:<index>`).
 */
export function checkDecisions(accepted: Iterable<string>, log: readonly LoggedTransaction[], stream: readonly StoredDecision[]): DecisionFindings {
  const findings: DecisionFindings = {
    notIngested: [],
    undecidedInLog: [],
    missingOnStream: [],
    neverCommitted: [],
    duplicated: [],
    contradicted: [],
    decisionsInLog: 0,
    decisionsOnStream: 0,
  };
  const submitted = new Set<string>();
  const decidedInLog = new Set<string>();
  const commitsInLog = new Map<string, number>();
  const phase = new Map<string, JobPhase>();
  const bySeq = new Map<number, LoggedTransaction>();
  for (const logged of log) {
    bySeq.set(logged.seq, logged);
    for (const event of logged.tx.events) {
      switch (event.type) {
        case 'JobSubmitted':
          submitted.add(event.job.id);
          phase.set(event.job.id, 'pending');
          break;
        case 'GangCommitted': {
          findings.decisionsInLog++;
          decidedInLog.add(event.jobId);
          commitsInLog.set(event.jobId, (commitsInLog.get(event.jobId) ?? 0) + 1);
          const was = phase.get(event.jobId);
          if (was === 'committed' || was === 'finished') findings.duplicated.push(`${event.jobId}: committed again at log ${logged.seq} without a requeue`);
          if (was === 'final') findings.contradicted.push(`${event.jobId}: committed at log ${logged.seq} after a final abort`);
          phase.set(event.jobId, 'committed');
          break;
        }
        case 'GangAborted': {
          findings.decisionsInLog++;
          decidedInLog.add(event.jobId);
          const was = phase.get(event.jobId);
          // a cancel may end a running job; nothing else may finally abort a committed one
          if (event.final && was === 'committed' && event.reason.category !== 'cancelled') {
            findings.contradicted.push(`${event.jobId}: final abort (${event.reason.category}) at log ${logged.seq} of a committed gang`);
          }
          if (event.final) phase.set(event.jobId, 'final');
          else if (event.reason.category === 'node-lost') phase.set(event.jobId, 'pending');
          break;
        }
        case 'JobPended':
          phase.set(event.jobId, 'pending');
          break;
        case 'JobFinished':
          phase.set(event.jobId, 'finished');
          break;
        default:
          break;
      }
    }
  }

  const byMsgId = new Map<string, StoredDecision>();
  const streamCommits = new Map<string, number>();
  const streamFinalAborts = new Map<string, string>();
  const decidedOnStream = new Set<string>();
  for (const m of stream) {
    const earlier = byMsgId.get(m.msgId);
    if (earlier !== undefined) {
      if (earlier.data === m.data) findings.duplicated.push(`${m.msgId}: stored twice on MUSTER_DECISIONS (stream ${earlier.seq} and ${m.seq})`);
      else findings.contradicted.push(`${m.msgId}: two different bodies on MUSTER_DECISIONS (stream ${earlier.seq} and ${m.seq})`);
    } else {
      byMsgId.set(m.msgId, m);
    }
    const mismatch = logMismatch(m, bySeq);
    if (mismatch !== null) findings.contradicted.push(mismatch);
    if (!m.subject.startsWith(subjects.decisionPrefix)) continue;
    findings.decisionsOnStream++;
    const jobId = idOf(m.subject);
    decidedOnStream.add(jobId);
    const body = parseBody(m.data);
    if (body?.type === 'GangCommitted') streamCommits.set(jobId, (streamCommits.get(jobId) ?? 0) + 1);
    if (body?.type === 'GangAborted' && body.final === true && body.category !== 'cancelled') streamFinalAborts.set(jobId, m.msgId);
  }
  for (const [jobId, n] of streamCommits) {
    const inLog = commitsInLog.get(jobId) ?? 0;
    if (n > inLog) findings.duplicated.push(`${jobId}: ${n} commits on MUSTER_DECISIONS, ${inLog} in the log`);
    const abort = streamFinalAborts.get(jobId);
    if (abort !== undefined) findings.contradicted.push(`${jobId}: committed and finally aborted (${abort}) on MUSTER_DECISIONS`);
  }

  for (const id of accepted) {
    if (!submitted.has(id)) findings.notIngested.push(id);
    if (!decidedInLog.has(id)) findings.undecidedInLog.push(id);
    if (!decidedOnStream.has(id)) findings.missingOnStream.push(id);
    if ((commitsInLog.get(id) ?? 0) === 0) findings.neverCommitted.push(id);
  }
  return findings;
}

/** The accepted jobs counted as lost: not ingested, or without a decision in the log or on the stream. */
export function lostJobs(f: DecisionFindings): string[] {
  return [...new Set([...f.notIngested, ...f.undecidedInLog, ...f.missingOnStream])].sort();
}

// a message under `muster:<logSeq>:<index>[:<node>]` for a decision must carry exactly that log event
function logMismatch(m: StoredDecision, bySeq: Map<number, LoggedTransaction>): string | null {
  if (!m.subject.startsWith(subjects.decisionPrefix)) return null;
  const match = /^muster:(\d+):(\d+)$/.exec(m.msgId);
  if (match === null) return `stream ${m.seq}: decision msg id ${JSON.stringify(m.msgId)} is not muster:<logSeq>:<index>`;
  const logSeq = Number(match[1]);
  const event = bySeq.get(logSeq)?.tx.events[Number(match[2])];
  if (event === undefined) return `stream ${m.seq} (${m.msgId}): no such event in the log`;
  if (canonicalJson(event) !== m.data) return `stream ${m.seq} (${m.msgId}): differs from log ${logSeq} event ${match[2]}`;
  return null;
}

function parseBody(data: string): { type?: unknown; final?: unknown; category?: unknown } | null {
  try {
    const body = JSON.parse(data) as { type?: unknown; final?: unknown; reason?: { category?: unknown } };
    return { type: body.type, final: body.final, category: body.reason?.category };
  } catch {
    return null;
  }
}

/**
 * One line per job on where it is: its status, the nodes holding its members, which of those
 * nodes have its bind on MUSTER_DECISIONS, and how many members reported done (to tell a lost
 * bind from a lost completion when a drill does not settle).
 */
export function whereJobsAre(ids: readonly string[], state: State, stream: readonly StoredDecision[]): string[] {
  return ids.map((id) => {
    const job = shardGet(state.jobs, id);
    if (job === undefined) return `${id}: not in the log's state`;
    const nodes = [...new Set(job.allocations.map((a) => a.node))].sort();
    const bound = new Map(stream.filter((m) => m.subject.startsWith(subjects.bindPrefix) && bindJob(m.data) === id).map((m) => [idOf(m.subject), m.seq]));
    const members = job.members.filter((m) => m !== null);
    const done = members.filter((m) => m.done).length;
    const binds = nodes.map((n) => `${n} (${bound.has(n) ? `bind at stream ${bound.get(n)}` : 'no bind'})`).join(', ');
    return `${id}: ${job.status} on ${binds || 'no node'}; ${done}/${members.length} members done`;
  });
}

function bindJob(data: string): string | null {
  try {
    const body = JSON.parse(data) as { jobId?: unknown };
    return typeof body.jobId === 'string' ? body.jobId : null;
  } catch {
    return null;
  }
}
