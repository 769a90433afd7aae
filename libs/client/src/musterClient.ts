import { DECISIONS_STREAM, publishInput, readOutput, subjectMessages, subjects, submitMsgId } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { ID_PATTERN, canonicalHash, validateJobSpec, validatePolicySpec, validateQueueSpec } from '@muster/core';
import type { Decision } from '@muster/core';
import type { JobDecision } from './decisions.ts';
import type { Explanation, JobDetails, JobSummary, NodeSummary, QueueView, RetiredJobDetails, Submitted } from './apiTypes.ts';
import { parseDecision, settles } from './decisions.ts';
import { MusterError } from './musterError.ts';
import { fromBusError } from './fromBusError.ts';
import { outputLines } from './outputLines.ts';
import type { OutputLine } from './outputLines.ts';

/** Options of a `MusterClient`. */
export interface MusterClientOptions {
  /** Milliseconds to wait for an API answer or a publish acknowledgement (default 5000). */
  timeoutMs?: number;
}

/** How `submit` reaches the scheduler. */
export interface SubmitOptions {
  /**
   * `api` asks a scheduler replica (which validates against its state and forwards into MUSTER_IN);
   * `stream` publishes straight into MUSTER_IN (the leader ingests it whenever it runs); `auto`
   * (the default) asks the API and falls back to the stream when no replica answers.
   */
  via?: 'api' | 'stream' | 'auto';
}

/** Options of `watch` and `watchAll`. */
export interface WatchOptions {
  /** Ends the iteration. */
  signal?: AbortSignal;
}

/** Options of `logs`. */
export interface LogsOptions {
  /** Only this member's lines. */
  member?: number;
  /** Only the lines of this attempt of the gang (0, then 1, 2, … after restarts). */
  attempt?: number;
  /** Keep giving lines as they come, until `signal` aborts (default: end after the stored ones). */
  follow?: boolean;
  /** Start from the latest stored batch of each member on each node instead of the oldest (a tail whose cost does not grow with the output). */
  latest?: boolean;
  /** Start at this MUSTER_OUTPUT sequence (an `OutputLine.seq`: resume a read); overrides `latest`. */
  fromSeq?: number;
  signal?: AbortSignal;
}

/** Options of `wait`. */
export interface WaitOptions extends WatchOptions {
  /** Give up after this many milliseconds with a `timeout` error (default: wait without limit). */
  timeoutMs?: number;
  /** Called with every decision on the way, including non-final aborts (the job still waits) and resizes. */
  onDecision?: (decision: JobDecision) => void;
}

/** The answer to a cancel or close: the job and the input's sequence in MUSTER_IN. */
export interface Requested {
  jobId: string;
  inputSeq: number;
}

/**
 * A publisher's handle on muster over one bus connection: submit jobs, follow their
 * decisions, cancel or close them, and read the scheduler's state from any replica.
 *
 * @example
 * ```ts
 * import { connectClient } from '@muster/client';
 *
 * const muster = await connectClient('nats://127.0.0.1:4222');
 * const { jobId } = await muster.submit({
 *   id: 'hello', identity: { user: 'alice', queue: 'default', project: 'demo' },
 *   tasks: 2, resources: { cpu: 500, memoryMb: 256 },
 * });
 * const decision = await muster.wait(jobId, { timeoutMs: 30_000 });
 * console.log(decision.type, decision.type === 'GangCommitted' ? decision.allocations : decision.reason);
 * await muster.disconnect();
 * ```
 */
export class MusterClient {
  private readonly bus: Bus;
  private readonly timeoutMs: number;
  private readonly ownsConnection: boolean;

  /** Wraps a bus connection the caller owns (`disconnect()` leaves it open). */
  constructor(bus: Bus, opts: MusterClientOptions = {}, ownsConnection = false) {
    this.timeoutMs = opts.timeoutMs ?? 5_000;
    this.bus = bus.withTimeout(this.timeoutMs);
    this.ownsConnection = ownsConnection;
  }

  /**
   * Submits a JobSpec: validated here first (an `invalid` error names the field in `path`), then
   * by the service; resolves with the job id and the input's MUSTER_IN sequence.
   */
  async submit(spec: unknown, opts: SubmitOptions = {}): Promise<Submitted> {
    const valid = validateJobSpec(spec);
    if (!valid.ok) throw new MusterError('invalid', valid.error.message, { path: valid.error.path });
    const jobId = valid.value.id;
    const via = opts.via ?? 'auto';
    if (via !== 'stream') {
      try {
        return readSubmitted(await this.request(subjects.apiSubmit, spec, `submit ${jobId}`), jobId);
      } catch (err) {
        // no replica answers: the stream still takes the input, and a leader ingests it when it runs
        if (!(via === 'auto' && err instanceof MusterError && err.code === 'unavailable')) throw err;
      }
    }
    const ack = await this.publish(subjects.submit, spec, submitMsgId(jobId, spec), `submit ${jobId}`);
    return { jobId, inputSeq: ack };
  }

  /** Asks the scheduler to cancel a pending or running job (a final `cancelled` decision follows). */
  async cancel(jobId: string): Promise<Requested> {
    checkJobId(jobId);
    return { jobId, inputSeq: await this.publish(subjects.cancel, { jobId }, `${jobId}:cancel`, `cancel ${jobId}`) };
  }

  /** Asks the scheduler to release a running job (typically one kept warm with `minInstances`). */
  async close(jobId: string): Promise<Requested> {
    checkJobId(jobId);
    return { jobId, inputSeq: await this.publish(subjects.close, { jobId }, `${jobId}:close`, `close ${jobId}`) };
  }

  /**
   * Sets the scheduling policy (an operator's input, DESIGN.md §11): validated here first (an
   * `invalid` error names the field), then published on `muster.in.policy`; the fields given
   * replace the ones in force. Only a user allowed to publish there (an operator) can.
   */
  async setPolicy(spec: unknown): Promise<{ inputSeq: number }> {
    const valid = validatePolicySpec(spec);
    if (!valid.ok) throw new MusterError('invalid', valid.error.message, { path: valid.error.path });
    return { inputSeq: await this.publish(subjects.policy, valid.value, `policy:${canonicalHash(valid.value).slice(0, 12)}`, 'set the policy') };
  }

  /**
   * Creates or replaces a queue (an operator's input, DESIGN.md §12): the QueueSpec is validated
   * here first (an `invalid` error names the field), then published on `muster.in.queue.<name>.set`.
   * What depends on the queues already defined (the parent exists, no cycle) the scheduler checks
   * at ingest: a refusal there is an `InputRejected` in the log, and nothing is applied. Only a user
   * allowed to publish there (an operator) can.
   */
  async setQueue(spec: unknown): Promise<{ name: string; inputSeq: number }> {
    const valid = validateQueueSpec(spec);
    if (!valid.ok) throw new MusterError('invalid', valid.error.message, { path: valid.error.path });
    const { name } = valid.value;
    // one key per call (setting a queue is idempotent, so a resend costs nothing): setting a queue
    // back to a spec it had a minute ago must not be dropped by MUSTER_IN's dedupe window
    const msgId = `queue:${name}:${canonicalHash(valid.value).slice(0, 12)}:${globalThis.crypto.randomUUID().slice(0, 8)}`;
    return { name, inputSeq: await this.publish(subjects.queueSet(name), valid.value, msgId, `set queue ${name}`) };
  }

  /**
   * The decisions about one job, oldest first, then live as they come: it replays
   * `muster.decision.<jobId>` from the start, so a watcher that comes late still sees every
   * decision, and an elastic gang's resizes (`GangResized`, DESIGN.md §13). Ends after a final
   * abort or when `signal` aborts.
   */
  async *watch(jobId: string, opts: WatchOptions = {}): AsyncGenerator<JobDecision, void, undefined> {
    checkJobId(jobId);
    for await (const decision of this.decisions(subjects.decision(jobId), 'all', opts.signal, `watch ${jobId}`)) {
      yield decision;
      if (decision.type === 'GangAborted' && decision.final) return;
    }
  }

  /** Every job's decisions and resizes from now on (or from the start with `deliver: 'all'`), until `signal` aborts. */
  watchAll(opts: WatchOptions & { deliver?: 'all' | 'new' } = {}): AsyncGenerator<JobDecision, void, undefined> {
    return this.decisions(subjects.allDecisions, opts.deliver ?? 'new', opts.signal, 'watch decisions');
  }

  /**
   * The decision that settles a job: `GangCommitted`, or a final `GangAborted` (timeout, cancel);
   * non-final aborts (it still waits) and resizes of an elastic gang go to `onDecision`. Throws
   * `timeout` after `timeoutMs`.
   */
  async wait(jobId: string, opts: WaitOptions = {}): Promise<Decision> {
    const timer = new AbortController();
    const handle = opts.timeoutMs === undefined ? undefined : setTimeout(() => timer.abort(), opts.timeoutMs);
    const signal = opts.signal === undefined ? timer.signal : AbortSignal.any([opts.signal, timer.signal]);
    try {
      for await (const decision of this.watch(jobId, { signal })) {
        opts.onDecision?.(decision);
        if (decision.type !== 'GangResized' && settles(decision)) return decision;
      }
    } finally {
      clearTimeout(handle);
    }
    if (timer.signal.aborted) throw new MusterError('timeout', `no placement or final decision for ${jobId} within ${opts.timeoutMs} ms`);
    throw new MusterError('aborted', `stopped waiting for ${jobId}`);
  }

  /**
   * The lines a job's members printed (stdout and stderr, every node, every attempt), in the order
   * MUSTER_OUTPUT stored them: each member's lines in the order it printed them, members
   * interleaved by batch (DESIGN.md §15). Output older than the stream's limits (age, size) is gone.
   * A job that printed nothing, or that no scheduler knows, gives no lines: ask `job()` to tell the two apart.
   */
  async *logs(jobId: string, opts: LogsOptions = {}): AsyncGenerator<OutputLine, void, undefined> {
    checkJobId(jobId);
    checkCount('member', opts.member, 0);
    checkCount('attempt', opts.attempt, 0);
    checkCount('fromSeq', opts.fromSeq, 1);
    const messages = readOutput(this.bus, jobId, {
      ...(opts.follow === undefined ? {} : { follow: opts.follow }),
      ...(opts.member === undefined ? {} : { member: opts.member }),
      ...(opts.latest === undefined ? {} : { latest: opts.latest }),
      ...(opts.fromSeq === undefined ? {} : { fromSeq: opts.fromSeq }),
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    });
    try {
      while (true) {
        let next: IteratorResult<{ seq: number; subject: string; data: Uint8Array }>;
        try {
          next = await messages.next();
        } catch (err) {
          throw fromBusError(err, `logs of ${jobId}`);
        }
        if (next.done === true) return;
        for (const line of outputLines(next.value.seq, next.value.subject, next.value.data)) {
          if (opts.attempt === undefined || line.attempt === opts.attempt) yield line;
        }
      }
    } finally {
      await messages.return(undefined);
    }
  }

  /** One job as the scheduler knows it; `not-found` when no replica knows the id. */
  async job(jobId: string): Promise<JobDetails | RetiredJobDetails> {
    checkJobId(jobId);
    const reply = await this.request(subjects.apiJobGet, { jobId }, `job ${jobId}`);
    return field<JobDetails | RetiredJobDetails>(reply, 'job', 'object');
  }

  /** The jobs the scheduler knows, optionally only those with one status (`pending`, `running`, …): as many as one reply carries (`jobList` says how many more). */
  async jobs(filter: { status?: string } = {}): Promise<JobSummary[]> {
    return (await this.jobList(filter)).items;
  }

  /**
   * The jobs the scheduler knows (optionally with one status), at most `limit` of them and as many
   * as fit one reply (the server's max payload), with how many there are in all.
   */
  async jobList(filter: { status?: string; limit?: number } = {}): Promise<Listed<JobSummary>> {
    const body = { ...(filter.status === undefined ? {} : { status: filter.status }), ...(filter.limit === undefined ? {} : { limit: filter.limit }) };
    return listed<JobSummary>(await this.request(subjects.apiJobsList, body, 'list jobs'), 'jobs');
  }

  /** Every node the scheduler knows, with used and total capacity: as many as one reply carries (`nodeList` says how many more). */
  async nodes(): Promise<NodeSummary[]> {
    return (await this.nodeList()).items;
  }

  /** The nodes the scheduler knows, at most `limit` of them and as many as fit one reply, with how many there are in all. */
  async nodeList(filter: { limit?: number } = {}): Promise<Listed<NodeSummary>> {
    return listed<NodeSummary>(await this.request(subjects.apiNodesList, filter.limit === undefined ? {} : { limit: filter.limit }, 'list nodes'), 'nodes');
  }

  /** Every queue with its use, guarantee, max, borrowing and pending and running counts, by name (DESIGN.md §12). */
  async queues(): Promise<QueueView[]> {
    return field<QueueView[]>(await this.request(subjects.apiQueuesList, {}, 'list queues'), 'queues', 'array');
  }

  /** Why a job is where it is (for a pending one: its reason and how many hosts failed which check). */
  async explain(jobId: string): Promise<Explanation> {
    checkJobId(jobId);
    return field<Explanation>(await this.request(subjects.apiExplain, { jobId }, `explain ${jobId}`), 'explanation', 'object');
  }

  /** Drains and closes the connection if this client opened it (`connectClient`); otherwise does nothing. */
  async disconnect(): Promise<void> {
    if (this.ownsConnection && !this.bus.isClosed()) await this.bus.drain();
  }

  private async *decisions(
    subject: string,
    deliver: 'all' | 'new',
    signal: AbortSignal | undefined,
    what: string,
  ): AsyncGenerator<JobDecision, void, undefined> {
    const messages = subjectMessages(this.bus, DECISIONS_STREAM, subject, { deliver, ...(signal === undefined ? {} : { signal }) });
    try {
      while (true) {
        let next: IteratorResult<{ data: Uint8Array }>;
        try {
          next = await messages.next();
        } catch (err) {
          throw fromBusError(err, what);
        }
        if (next.done === true) return;
        const decision = parseDecision(next.value.data);
        if (decision !== null) yield decision;
      }
    } finally {
      // a caller that stops early (break, return, a settled wait) must not leave the consumer behind
      await messages.return(undefined);
    }
  }

  private async request(subject: string, body: unknown, what: string): Promise<Record<string, unknown>> {
    let data: Uint8Array;
    try {
      data = (await this.bus.request(subject, JSON.stringify(body), { timeoutMs: this.timeoutMs })).data;
    } catch (err) {
      throw fromBusError(err, what);
    }
    let reply: unknown;
    try {
      reply = JSON.parse(new TextDecoder().decode(data));
    } catch {
      throw new MusterError('bad-reply', `${what}: the service answered with something that is not JSON`);
    }
    if (!isRecord(reply) || typeof reply.ok !== 'boolean') {
      throw new MusterError('bad-reply', `${what}: the service's answer has no "ok"`);
    }
    if (!reply.ok) {
      const error = isRecord(reply.error) ? reply.error : {};
      const code = typeof error.code === 'string' ? error.code : 'unknown';
      const message = typeof error.message === 'string' ? error.message : `${what} failed`;
      throw new MusterError(code, message, { path: typeof error.path === 'string' ? error.path : '' });
    }
    return reply;
  }

  private async publish(subject: string, body: unknown, msgId: string, what: string): Promise<number> {
    try {
      return (await publishInput(this.bus, subject, body, msgId)).seq;
    } catch (err) {
      throw fromBusError(err, what);
    }
  }
}

function checkJobId(jobId: string): void {
  if (!ID_PATTERN.test(jobId)) {
    throw new MusterError('invalid', `jobId: must match ${ID_PATTERN.source} (got ${JSON.stringify(jobId)})`, { path: 'jobId' });
  }
}

/** An integer option of at least `min` (0 or 1), when given; otherwise an `invalid` error naming it. */
function checkCount(path: string, value: number | undefined, min: 0 | 1): void {
  if (value === undefined || (Number.isInteger(value) && value >= min)) return;
  throw new MusterError('invalid', `${path}: must be a ${min === 0 ? 'non-negative' : 'positive'} integer (got ${value})`, { path });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readSubmitted(reply: Record<string, unknown>, jobId: string): Submitted {
  if (typeof reply.inputSeq !== 'number') throw new MusterError('bad-reply', `submit ${jobId}: the answer has no inputSeq`);
  return { jobId: typeof reply.jobId === 'string' ? reply.jobId : jobId, inputSeq: reply.inputSeq };
}

/** A list the scheduler answered: the items one reply carried, how many there are, and whether some were left out. */
export interface Listed<T> {
  items: T[];
  total: number;
  truncated: boolean;
}

function listed<T>(reply: Record<string, unknown>, name: string): Listed<T> {
  const items = field<T[]>(reply, name, 'array');
  // a replica of before contract v1.1's list limits sends the whole list and no total
  const total = typeof reply.total === 'number' ? reply.total : items.length;
  return { items, total, truncated: reply.truncated === true };
}

function field<T>(reply: Record<string, unknown>, name: string, kind: 'object' | 'array'): T {
  const value = reply[name];
  const fits = kind === 'array' ? Array.isArray(value) : isRecord(value);
  if (!fits) throw new MusterError('bad-reply', `the service's answer has no ${name} ${kind}`);
  return value as T;
}
