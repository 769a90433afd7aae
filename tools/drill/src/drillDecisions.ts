import { decisionLogSeq, idOf, laterPublished, publishedBefore, subjects } from '@muster/bus';
import type { InputMessage, PublishOrder, StoredDecision } from '@muster/bus';
import { canonicalJson, decisionMsgId, isDecision, parseDecisionMsgId, shardEntriesSorted, shardGet } from '@muster/core';
import type { LoggedTransaction, State } from '@muster/core';

/**
 * What the drill read of a live cluster, in this order: MUSTER_IN, then MUSTER_DECISIONS, then
 * MUSTER_LOG. A leader publishes a decision only after its transaction is in the log and ingests
 * an input only after it is stored, so a log read after the others holds every transaction a
 * decision read before it names, and every ingest of an input read before it: the checks are
 * exact on a live system, whatever the leader does between the reads (as the audit's are).
 */
export interface LiveRead {
  inputs: readonly InputMessage[];
  stream: readonly StoredDecision[];
  log: readonly LoggedTransaction[];
}

/** Accepted work not done yet but not lost either: a cluster still working through a backlog. */
export interface Backlog {
  /** Stored in MUSTER_IN after the last input the log ingested. */
  notIngested: string[];
  /** Ingested, not committed yet, still pending. */
  pending: string[];
  /** Decided in the log after the last transaction whose decisions are on MUSTER_DECISIONS (the outbox's queue). */
  unpublished: string[];
}

/** What the drill's own accounting finds about decisions, in the log and on MUSTER_DECISIONS. */
export interface DecisionFindings {
  /** Accepted jobs lost, each with why: not in MUSTER_IN, skipped at ingest, or a logged decision missing on the stream though later ones are there. */
  lost: string[];
  /** Accepted jobs still in the backlog. */
  backlog: Backlog;
  /** Accepted jobs that never got a GangCommitted (every drill job fits: at rest, each must). */
  neverCommitted: string[];
  /** Duplicated decisions: a second commit of a running job, a msg id stored twice, more commits on the stream than in the log. */
  duplicated: string[];
  /** Contradicted decisions: a commit and a final abort for one job (a stop at the runtime limit of a gang whose every member's completion was stored before it), two bodies under one msg id, a stream message unlike its log event or with no log event behind it. */
  contradicted: string[];
  /** Gangs stopped at their runtime limit with members whose completion was not stored before it: a bind or a completion that reached its agent or MUSTER_IN late or not at all. */
  unfinished: string[];
  decisionsInLog: number;
  decisionsOnStream: number;
  /** The last log sequence MUSTER_DECISIONS holds messages of (0: none). */
  lastPublishedLogSeq: number;
  /** The log's last ingested input sequence. */
  lastInputSeq: number;
}

type JobPhase = 'pending' | 'committed' | 'finished' | 'final';

/**
 * Checks that every accepted job is in MUSTER_IN, ingested (or still waiting to be), decided in
 * the log and published, or still in the backlog; that no job was committed twice without a
 * requeue between or both committed and finally aborted; and that every message on
 * MUSTER_DECISIONS is unique under its msg id and equal to the log event it names
 * (`muster:<logSeq>:<index>`), in a log read after it.
 */
export function checkDecisions(accepted: Iterable<string>, read: LiveRead): DecisionFindings {
  const { inputs, stream, log } = read;
  const f: DecisionFindings = {
    lost: [],
    backlog: { notIngested: [], pending: [], unpublished: [] },
    neverCommitted: [],
    duplicated: [],
    contradicted: [],
    unfinished: [],
    decisionsInLog: 0,
    decisionsOnStream: 0,
    lastPublishedLogSeq: 0,
    lastInputSeq: 0,
  };
  const lastLogSeq = log[log.length - 1]?.seq ?? 0;
  // the last message published, in the order a leader publishes (log sequence, event, node)
  let lastPublished: PublishOrder | null = null;
  for (const m of stream) {
    f.lastPublishedLogSeq = Math.max(f.lastPublishedLogSeq, decisionLogSeq(m) ?? 0);
    lastPublished = laterPublished(lastPublished, m.msgId);
  }

  const submitted = new Set<string>();
  const limits = new Map<string, number>();
  // the last commit of each job: when, and how many members
  const commits = new Map<string, { at: number; members: number }>();
  const doneAt = completionTimes(inputs);
  const commitsInLog = new Map<string, number>();
  const phase = new Map<string, JobPhase>();
  // each job's decisions in the log, by msg id, to find those the stream should hold
  const logDecisions = new Map<string, string[]>();
  const bySeq = new Map<number, LoggedTransaction>();
  for (const logged of log) {
    bySeq.set(logged.seq, logged);
    logged.tx.events.forEach((event, index) => {
      if (event.type === 'JobSubmitted') {
        submitted.add(event.job.id);
        if (event.job.runtimeLimitMs !== undefined) limits.set(event.job.id, event.job.runtimeLimitMs);
        phase.set(event.job.id, 'pending');
        f.lastInputSeq = Math.max(f.lastInputSeq, event.inputSeq);
        return;
      }
      // every ingested input leaves an event naming its sequence (JobRejected, TaskCompleted, …)
      if ('inputSeq' in event && typeof event.inputSeq === 'number') f.lastInputSeq = Math.max(f.lastInputSeq, event.inputSeq);
      if (!isDecision(event)) {
        if (event.type === 'JobPended') phase.set(event.jobId, 'pending');
        if (event.type === 'JobFinished') phase.set(event.jobId, 'finished');
        return;
      }
      f.decisionsInLog++;
      logDecisions.set(event.jobId, [...(logDecisions.get(event.jobId) ?? []), decisionMsgId(logged.seq, index)]);
      const was = phase.get(event.jobId);
      if (event.type === 'GangCommitted') {
        commitsInLog.set(event.jobId, (commitsInLog.get(event.jobId) ?? 0) + 1);
        if (was === 'committed' || was === 'finished') f.duplicated.push(`${event.jobId}: committed again at log ${logged.seq} without a requeue`);
        if (was === 'final') f.contradicted.push(`${event.jobId}: committed at log ${logged.seq} after a final abort`);
        phase.set(event.jobId, 'committed');
        commits.set(event.jobId, { at: event.at, members: event.allocations.reduce((n, a) => n + a.members.length, 0) });
        return;
      }
      // a cancel may end a running job, and its runtime limit one whose members did not all finish
      // before it; nothing else may finally abort a committed one
      if (event.final && was === 'committed' && event.reason.category === 'runtime-limit') {
        const stop = limitStop(event.jobId, logged.seq, commits.get(event.jobId), limits.get(event.jobId), doneAt.get(event.jobId));
        if (stop.finished) f.contradicted.push(stop.line);
        else f.unfinished.push(stop.line);
      } else if (event.final && was === 'committed' && event.reason.category !== 'cancelled') {
        f.contradicted.push(`${event.jobId}: final abort (${event.reason.category}) at log ${logged.seq} of a committed gang`);
      }
      if (event.final) phase.set(event.jobId, 'final');
      else if (event.reason.category === 'node-lost') phase.set(event.jobId, 'pending');
    });
  }

  const byMsgId = new Map<string, StoredDecision>();
  const streamCommits = new Map<string, number>();
  const streamFinalAborts = new Map<string, string>();
  for (const m of stream) {
    const earlier = byMsgId.get(m.msgId);
    if (earlier !== undefined) {
      if (earlier.data === m.data) f.duplicated.push(`${m.msgId}: stored twice on MUSTER_DECISIONS (stream ${earlier.seq} and ${m.seq})`);
      else f.contradicted.push(`${m.msgId}: two different bodies on MUSTER_DECISIONS (stream ${earlier.seq} and ${m.seq})`);
    } else {
      byMsgId.set(m.msgId, m);
    }
    if (!m.subject.startsWith(subjects.decisionPrefix)) continue;
    const mismatch = logMismatch(m, bySeq, lastLogSeq);
    if (mismatch !== null) f.contradicted.push(mismatch);
    f.decisionsOnStream++;
    const jobId = idOf(m.subject);
    const body = parseBody(m.data);
    if (body?.type === 'GangCommitted') streamCommits.set(jobId, (streamCommits.get(jobId) ?? 0) + 1);
    // (a stop at the runtime limit is judged from the log, above)
    if (body?.type === 'GangAborted' && body.final === true && body.category !== 'cancelled' && body.category !== 'runtime-limit') streamFinalAborts.set(jobId, m.msgId);
  }
  for (const [jobId, n] of streamCommits) {
    const inLog = commitsInLog.get(jobId) ?? 0;
    if (n > inLog) f.duplicated.push(`${jobId}: ${n} commits on MUSTER_DECISIONS, ${inLog} in the log`);
    const abort = streamFinalAborts.get(jobId);
    if (abort !== undefined) f.contradicted.push(`${jobId}: committed and finally aborted (${abort}) on MUSTER_DECISIONS`);
  }

  const inputSeqOf = submissionSeqs(inputs);
  for (const id of accepted) {
    const seq = inputSeqOf.get(id);
    if (seq === undefined) f.lost.push(`${id}: acknowledged but not in MUSTER_IN`);
    else if (!submitted.has(id)) {
      if (seq > f.lastInputSeq) f.backlog.notIngested.push(id);
      else f.lost.push(`${id}: MUSTER_IN ${seq} ingested (log at input ${f.lastInputSeq}) with no JobSubmitted`);
    }
    if ((commitsInLog.get(id) ?? 0) === 0) {
      f.neverCommitted.push(id);
      if (submitted.has(id) && phase.get(id) === 'pending') f.backlog.pending.push(id);
    }
    // decisions go out in log order, a transaction's in its events' order (a big one over several
    // publish calls): one after the last message published is queued, one before it is missing
    const owed = (logDecisions.get(id) ?? []).filter((msgId) => !byMsgId.has(msgId));
    const missing = owed.filter((msgId) => publishedBefore(msgId, lastPublished));
    if (missing.length > 0) f.lost.push(`${id}: decision ${missing[0]} not on MUSTER_DECISIONS, though later ones are`);
    else if (owed.length > 0) f.backlog.unpublished.push(id);
  }
  return f;
}

// how far before a runtime limit every completion must have been stored for a stop at it to
// contradict them: the leader holds a limit back to the first input it has not taken, carried to
// its clock by an offset of a few milliseconds (docs/events.md, dueBy)
const LIMIT_TOLERANCE_MS = 1_000;

/** A stop at the runtime limit, judged: contradicted (`finished`) when every member's completion was stored in MUSTER_IN well before the limit. */
function limitStop(jobId: string, seq: number, commit: { at: number; members: number } | undefined, limitMs: number | undefined, done: Map<number, number[]> | undefined): { finished: boolean; line: string } {
  if (commit === undefined || limitMs === undefined) return { finished: false, line: `${jobId}: stopped at its runtime limit at log ${seq} (no commit or limit known to check it against)` };
  const limit = commit.at + limitMs;
  const before = [...(done ?? new Map<number, number[]>()).values()].filter((times) => times.some((at) => at >= commit.at && at <= limit - LIMIT_TOLERANCE_MS)).length;
  if (before >= commit.members) {
    return { finished: true, line: `${jobId}: stopped at its runtime limit at log ${seq} (limit ${limit}), though every member's completion was stored in MUSTER_IN by then` };
  }
  return { finished: false, line: `${jobId}: stopped at its runtime limit at log ${seq} with ${commit.members - before} of ${commit.members} members not reported done before it` };
}

// when each member of each job reported done (stored times), by job and member
function completionTimes(inputs: readonly InputMessage[]): Map<string, Map<number, number[]>> {
  const out = new Map<string, Map<number, number[]>>();
  for (const input of inputs) {
    if (!input.subject.startsWith('muster.in.node.') || !input.subject.endsWith('.done') || input.storedAt === undefined) continue;
    try {
      const body = JSON.parse(input.data) as { jobId?: unknown; member?: unknown };
      if (typeof body.jobId !== 'string' || typeof body.member !== 'number') continue;
      let members = out.get(body.jobId);
      if (members === undefined) out.set(body.jobId, (members = new Map()));
      members.set(body.member, [...(members.get(body.member) ?? []), input.storedAt]);
    } catch {
      // a body that is not JSON is no completion of the drill's
    }
  }
  return out;
}

/** The job ids of accepted jobs lost (the first word of each finding). */
export function lostJobs(f: DecisionFindings): string[] {
  return [...new Set(f.lost.map((l) => l.slice(0, l.indexOf(':'))))].sort();
}

// a message under `muster:<logSeq>:<index>` for a decision must carry exactly that log event
function logMismatch(m: StoredDecision, bySeq: Map<number, LoggedTransaction>, lastLogSeq: number): string | null {
  const id = parseDecisionMsgId(m.msgId);
  if (id === null || id.node !== null) return `stream ${m.seq}: decision msg id ${JSON.stringify(m.msgId)} is not muster:<logSeq>:<index>`;
  const { logSeq, index } = id;
  // the log was read after the stream: a decision past its end was published with no transaction behind it
  if (logSeq > lastLogSeq) return `stream ${m.seq} (${m.msgId}): names log ${logSeq}, past the end (${lastLogSeq}) of a log read after it`;
  const event = bySeq.get(logSeq)?.tx.events[index];
  if (event === undefined) return `stream ${m.seq} (${m.msgId}): no such event in the log`;
  if (canonicalJson(event) !== m.data) return `stream ${m.seq} (${m.msgId}): differs from log ${logSeq} event ${index}`;
  return null;
}



// the first stored submission of each job id (a retry outside the dedupe window would be a second, rejected as a duplicate)
function submissionSeqs(inputs: readonly InputMessage[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const input of inputs) {
    if (input.subject !== subjects.submit) continue;
    try {
      const id = (JSON.parse(input.data) as { id?: unknown }).id;
      if (typeof id === 'string' && !out.has(id)) out.set(id, input.seq);
    } catch {
      // a body that is not JSON is not one of the drill's submissions
    }
  }
  return out;
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

/** How nodes came and went in the log: losses by cause, and registers of a node seen before (an agent registering it again). */
export interface NodeChurn {
  lostByHeartbeat: number;
  lostByOperator: number;
  registeredAgain: number;
}

/** Counts `NodeLost` events by cause and `NodeRegistered` events of nodes already registered, over the whole log. */
export function nodeChurn(log: readonly LoggedTransaction[]): NodeChurn {
  const churn: NodeChurn = { lostByHeartbeat: 0, lostByOperator: 0, registeredAgain: 0 };
  const seen = new Set<string>();
  for (const { tx } of log) {
    for (const e of tx.events) {
      if (e.type === 'NodeLost') {
        if (e.cause === 'heartbeat') churn.lostByHeartbeat++;
        else churn.lostByOperator++;
      } else if (e.type === 'NodeRegistered') {
        if (seen.has(e.node.id)) churn.registeredAgain++;
        seen.add(e.node.id);
      }
    }
  }
  return churn;
}

/**
 * The nodes of the log's state by status, e.g. `6 lost (sim-1, sim-2, sim-3, …)`: a settle that
 * failed with every node lost is the scheduler's view of the agents, not lost work.
 */
export function nodesByStatus(state: State): string {
  const by = new Map<string, string[]>();
  for (const [id, node] of shardEntriesSorted(state.nodes)) by.set(node.status, [...(by.get(node.status) ?? []), id]);
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, ids]) => `${ids.length} ${status}${status === 'up' ? '' : ` (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''})`}`)
    .join(', ');
}

function bindJob(data: string): string | null {
  try {
    const body = JSON.parse(data) as { jobId?: unknown };
    return typeof body.jobId === 'string' ? body.jobId : null;
  } catch {
    return null;
  }
}
