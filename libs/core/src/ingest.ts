import type { RejectionReason, SchedulerEvent, TaskCompleted } from './events.ts';
import { exitOf, gangFailure } from './gangFailure.ts';
import { cancelJob, loseNode, releaseAll, releaseMember } from './lifecycle.ts';
import { isJobIdTaken, isRetired } from './retire.ts';
import { shardGet } from './shard.ts';
import type { State } from './state.ts';
import { ID_PATTERN, QUEUE_NAME_PATTERN, alternativeFingerprints, jobFingerprint, validateJobSpec, validateNodeSpec, validatePolicySpec, validateQueueSpec } from './contract/index.ts';
import { jobInQueue, queueSetIssue } from './queues/queueTree.ts';
import { canonicalJson } from './canonical.ts';
import type { CanonicalHasher } from './canonical.ts';
import { MAX_PAYLOAD_BYTES } from './wire/limits.ts';
import { nodeInputOf, queueSetOf, subjects } from './wire/subjects.ts';

/** One message read from MUSTER_IN. */
export interface Input {
  /** MUSTER_IN stream sequence. */
  seq: number;
  subject: string;
  /** The body as UTF-8 text. */
  data: string;
}

/**
 * Turns one input into the events it causes, against the state it arrives in: an accepted fact and
 * the decisions taken at ingest (cancel, close, completion, node loss), or a rejection that applies
 * nothing. Pure and total: bad input never throws. A hasher (the turn's context) makes fingerprints cheaper, never different.
 */
export function ingest(state: State, input: Input, at: number, hasher?: CanonicalHasher): SchedulerEvent[] {
  const inputSeq = input.seq;
  const reject = (reason: RejectionReason): SchedulerEvent[] => [
    { type: 'InputRejected', inputSeq, subject: input.subject, reason },
  ];
  // the largest body accepted: the MUSTER_IN stream refuses larger messages too
  if (input.data.length > MAX_PAYLOAD_BYTES) {
    const reason = invalid('', `body of ${input.data.length} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
    return input.subject === subjects.submit ? [{ type: 'JobRejected', inputSeq, jobId: null, reason }] : reject(reason);
  }
  const body = parseBody(input.data);
  if (input.subject === subjects.submit) return ingestSubmit(state, inputSeq, body, hasher);
  if (!body.ok) return reject(body.error);

  switch (input.subject) {
    case subjects.policy: {
      const policy = validatePolicySpec(body.value);
      if (!policy.ok) return reject({ category: 'invalid', ...policy.error });
      return [{ type: 'PolicySet', inputSeq, policy: policy.value }];
    }
    case subjects.cancel:
    case subjects.close: {
      const jobId = jobIdBody(body.value);
      if (!jobId.ok) return reject(jobId.error);
      const job = shardGet(state.jobs, jobId.value);
      if (job === undefined) return reject(unknownJob(state, jobId.value));
      if (input.subject === subjects.cancel) {
        if (job.status !== 'pending' && job.status !== 'running') {
          return reject(invalid('jobId', `job ${jobId.value} is already ${job.status}`));
        }
        return [{ type: 'JobCancelled', inputSeq, jobId: jobId.value }, ...cancelJob(state, job, at)];
      }
      if (job.status !== 'running') return reject(invalid('jobId', `job ${jobId.value} is ${job.status}, not running`));
      return [
        { type: 'JobClosed', inputSeq, jobId: jobId.value },
        ...releaseAll(job, 'closed'),
        { type: 'JobFinished', jobId: jobId.value, at, outcome: 'closed' },
      ];
    }
  }

  const queueName = queueSetOf(input.subject);
  if (queueName !== null) return ingestQueue(state, inputSeq, queueName, body.value);

  const nodeInput = nodeInputOf(input.subject);
  if (nodeInput === null) return reject({ category: 'unknown', path: '', message: `unknown subject ${input.subject}` });
  const { nodeId, kind: verb } = nodeInput;
  if (!ID_PATTERN.test(nodeId)) return reject(invalid('id', `node id in subject must match ${ID_PATTERN.source}`));
  const node = shardGet(state.nodes, nodeId);

  if (verb === 'register') {
    const spec = validateNodeSpec(body.value);
    if (!spec.ok) return reject({ category: 'invalid', ...spec.error });
    if (spec.value.id !== nodeId) return reject(invalid('id', `node id ${spec.value.id} does not match the subject's ${nodeId}`));
    if (node !== undefined && Object.keys(node.jobs).length > 0 && canonicalJson(node.spec) !== canonicalJson(spec.value)) {
      // never shrink a node under running members: that could overcommit it
      return reject(invalid('capacity', `node ${nodeId} holds running members; it cannot change its spec until they finish`));
    }
    return [{ type: 'NodeRegistered', v: 1, inputSeq, node: spec.value }];
  }
  if (verb === 'drain' || verb === 'lost') {
    if (!isEmptyObject(body.value)) return reject(invalid('', `the ${verb} body must be {}`));
    if (node === undefined) return reject({ category: 'unknown', path: 'id', message: `unknown node ${nodeId}` });
    if (verb === 'drain') return [{ type: 'NodeDrained', inputSeq, nodeId }];
    if (node.status === 'lost') return reject(invalid('id', `node ${nodeId} is already lost`));
    return [{ type: 'NodeLost', inputSeq, nodeId, cause: 'operator' }, ...loseNode(state, nodeId, at)];
  }
  // done
  const done = doneBody(body.value);
  if (!done.ok) return reject(done.error);
  const report = done.value;
  const job = shardGet(state.jobs, report.jobId);
  if (job === undefined) return reject(unknownJob(state, report.jobId));
  // a late report from an attempt that was stopped (contract v1.2) never touches the one after it
  const attempt = job.attempt ?? 0;
  if (report.attempt !== undefined && report.attempt !== attempt) {
    return reject(invalid('attempt', `attempt ${report.attempt} of job ${job.spec.id} is over; the job is on attempt ${attempt}`));
  }
  const member = job.members[report.member];
  if (job.status !== 'running' || member === undefined || member === null) {
    return reject(invalid('member', `member ${report.member} of job ${job.spec.id} is not running`));
  }
  if (member.node !== nodeId) {
    return reject(invalid('member', `member ${report.member} of job ${job.spec.id} runs on ${member.node}, not ${nodeId}`));
  }
  if (member.done) return reject({ category: 'duplicate', path: 'member', message: `member ${report.member} of job ${job.spec.id} already finished` });
  const completed: TaskCompleted = { type: 'TaskCompleted', inputSeq, jobId: job.spec.id, member: report.member, nodeId, ok: report.ok, ...exitOf(report) };
  if (report.attempt !== undefined) completed.attempt = report.attempt;
  const events: SchedulerEvent[] = [completed];
  // a gang committed under contract v1.2 (it has a rendezvous) fails as one (DESIGN.md §15)
  if (!report.ok && job.rendezvous !== undefined) {
    const failure = gangFailure(job, { member: report.member, node: nodeId, ...exitOf(report) }, at);
    if (failure !== null) return [...events, ...failure];
  }
  // a kept-warm gang (minInstances = gang size) holds its hosts until it is closed
  if (job.spec.minInstances > 0) return events;
  const release = releaseMember(job, report.member, 'completed');
  if (release !== null) events.push(release);
  // an elastic gang's members not bound now (never placed, or given up) are no part of it
  const allDone = job.members.every((m, i) => i === report.member || m === null || m.done);
  if (allDone) {
    const ok = report.ok && job.members.every((m, i) => i === report.member || m === null || m.ok);
    events.push({ type: 'JobFinished', jobId: job.spec.id, at, outcome: ok ? 'succeeded' : 'failed' });
  }
  return events;
}

/** The leader's own observation that a node stopped heartbeating, with its consequences. */
export function heartbeatLost(state: State, nodeId: string, at: number): SchedulerEvent[] {
  const node = shardGet(state.nodes, nodeId);
  if (node === undefined || node.status === 'lost') return [];
  return [{ type: 'NodeLost', nodeId, cause: 'heartbeat' }, ...loseNode(state, nodeId, at)];
}

function ingestSubmit(state: State, inputSeq: number, body: Parsed<unknown>, hasher: CanonicalHasher | undefined): SchedulerEvent[] {
  const claimedId = body.ok && isRecord(body.value) && typeof body.value.id === 'string' && ID_PATTERN.test(body.value.id) ? body.value.id : null;
  const rejected = (reason: RejectionReason): SchedulerEvent[] => [{ type: 'JobRejected', inputSeq, jobId: claimedId, reason }];
  if (!body.ok) return rejected(body.error);
  const spec = validateJobSpec(body.value);
  if (!spec.ok) return rejected({ category: 'invalid', ...spec.error });
  if (isJobIdTaken(state, spec.value.id)) {
    return rejected({ category: 'duplicate', path: 'id', message: `job ${spec.value.id} was already accepted` });
  }
  const job = state.queues === undefined ? { ok: true as const, value: spec.value } : jobInQueue(state.queues, spec.value);
  if (!job.ok) return rejected(job.error);
  const fingerprint = jobFingerprint(job.value, hasher);
  // each variant of a job with alternatives keys the unsatisfiable cache on its own (DESIGN.md §13)
  if (job.value.alternatives === undefined) return [{ type: 'JobSubmitted', v: 1, inputSeq, job: job.value, fingerprint }];
  return [{ type: 'JobSubmitted', v: 1, inputSeq, job: job.value, fingerprint, fingerprints: alternativeFingerprints(job.value, hasher) }];
}

/** `muster.in.queue.<name>.set`: a QueueSpec whose name is the subject's, that keeps the queues a tree. */
function ingestQueue(state: State, inputSeq: number, name: string, value: unknown): SchedulerEvent[] {
  const reject = (reason: RejectionReason): SchedulerEvent[] => [{ type: 'InputRejected', inputSeq, subject: subjects.queueSet(name), reason }];
  if (!QUEUE_NAME_PATTERN.test(name)) return reject(invalid('name', `queue name in subject must match ${QUEUE_NAME_PATTERN.source}`));
  const spec = validateQueueSpec(value);
  if (!spec.ok) return reject({ category: 'invalid', ...spec.error });
  if (spec.value.name !== name) return reject(invalid('name', `name: queue ${spec.value.name} does not match the subject's ${name}`));
  const issue = queueSetIssue(state.queues ?? {}, spec.value);
  if (issue !== null) return reject(issue);
  return [{ type: 'QueueSet', inputSeq, queue: spec.value }];
}

/** The rejection for a job the state does not hold: never seen, or finished and retired. */
function unknownJob(state: State, jobId: string): RejectionReason {
  return isRetired(state, jobId)
    ? invalid('jobId', `job ${jobId} finished and was retired`)
    : { category: 'unknown', path: 'jobId', message: `unknown job ${jobId}` };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: RejectionReason };

function invalid(path: string, message: string): RejectionReason {
  return { category: 'invalid', path, message };
}

function parseBody(data: string): Parsed<unknown> {
  if (data.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(data) as unknown };
  } catch (err) {
    return { ok: false, error: invalid('', `invalid JSON: ${(err as Error).message}`) };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmptyObject(value: unknown): boolean {
  return isRecord(value) && Object.keys(value).length === 0;
}

function jobIdBody(value: unknown): Parsed<string> {
  if (!isRecord(value)) return { ok: false, error: invalid('', 'body must be an object {"jobId": ...}') };
  const extra = Object.keys(value).find((k) => k !== 'jobId');
  if (extra !== undefined) return { ok: false, error: invalid(extra, `unknown field ${extra}`) };
  if (typeof value.jobId !== 'string' || !ID_PATTERN.test(value.jobId)) {
    return { ok: false, error: invalid('jobId', `jobId must be a string matching ${ID_PATTERN.source}`) };
  }
  return { ok: true, value: value.jobId };
}

/** A `done` body (DESIGN.md §2, §15): which member, whether it succeeded, and how it ended. */
interface DoneReport {
  jobId: string;
  member: number;
  ok: boolean;
  exitCode?: number;
  signal?: string;
  attempt?: number;
}

const DONE_FIELDS: ReadonlySet<string> = new Set(['jobId', 'member', 'ok', 'exitCode', 'signal', 'attempt']);

/** Longest `signal` name accepted in a done report. */
const MAX_SIGNAL_LENGTH = 32;

function doneBody(value: unknown): Parsed<DoneReport> {
  const id = isRecord(value) ? jobIdBody({ jobId: value.jobId }) : jobIdBody(value);
  if (!id.ok) return id;
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).find((k) => !DONE_FIELDS.has(k));
  if (extra !== undefined) return { ok: false, error: invalid(extra, `unknown field ${extra}`) };
  if (typeof v.member !== 'number' || !Number.isInteger(v.member) || v.member < 0) {
    return { ok: false, error: invalid('member', 'member must be an integer ≥ 0') };
  }
  if (typeof v.ok !== 'boolean') return { ok: false, error: invalid('ok', 'ok must be a boolean') };
  const report: DoneReport = { jobId: id.value, member: v.member, ok: v.ok };
  if (v.exitCode !== undefined) {
    if (typeof v.exitCode !== 'number' || !Number.isInteger(v.exitCode) || Math.abs(v.exitCode) > 2147483648) {
      return { ok: false, error: invalid('exitCode', 'exitCode must be an integer') };
    }
    report.exitCode = v.exitCode;
  }
  if (v.signal !== undefined) {
    if (typeof v.signal !== 'string' || v.signal.length === 0 || v.signal.length > MAX_SIGNAL_LENGTH) {
      return { ok: false, error: invalid('signal', `signal must be a name of 1 to ${MAX_SIGNAL_LENGTH} characters (e.g. SIGKILL)`) };
    }
    report.signal = v.signal;
  }
  if (v.attempt !== undefined) {
    if (typeof v.attempt !== 'number' || !Number.isInteger(v.attempt) || v.attempt < 0) {
      return { ok: false, error: invalid('attempt', 'attempt must be an integer ≥ 0') };
    }
    report.attempt = v.attempt;
  }
  return { ok: true, value: report };
}
