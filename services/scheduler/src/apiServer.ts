import type { Logger } from 'pino';
import { lastInputSequence, publishInput, subjects, submitMsgId } from '@muster/bus';
import type { Bus, BusSubscription } from '@muster/bus';
import { explain, isJobIdTaken, isRetired, jobInQueue, queueViews, retiredJob, shardGet, validateJobSpec } from '@muster/core';
import type { JobSpec, State } from '@muster/core';
import { fitList } from './listReply.ts';
import { jobRow, listJobs, listNodes } from './views.ts';

/** An API error (DESIGN.md §2): a stable code, a message, and the field at fault. */
export interface ApiError {
  code: 'invalid' | 'duplicate' | 'unknown' | 'not-found' | 'unavailable' | 'internal';
  message: string;
  path: string;
}

/** What every `muster.api.*` reply is. */
export type ApiReply = ({ ok: true } & Record<string, unknown>) | { ok: false; error: ApiError };

/** The subjects the API answers. */
export const API_SUBJECTS = [subjects.apiSubmit, subjects.apiJobGet, subjects.apiJobsList, subjects.apiNodesList, subjects.apiQueuesList, subjects.apiExplain] as const;

/**
 * Serves the request/reply API from this replica's folded state (any replica answers; one per
 * request, by queue group). Writes are forwarded into MUSTER_IN, never applied here.
 */
export class ApiServer {
  private sub: BusSubscription | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly state: () => State,
    private readonly log: Logger,
  ) {}

  /** Starts answering. */
  start(): void {
    this.sub = this.bus.serve(
      subjects.api,
      (msg) =>
        this.handle(msg.subject, msg.text()).then(
          (reply) => JSON.stringify(reply),
          (err: unknown) => {
            this.log.error({ err, subject: msg.subject }, 'api handler failed');
            return JSON.stringify(failure('internal', 'internal error', ''));
          },
        ),
      { queue: 'muster-api', onError: (err) => this.log.warn({ err }, 'api subscription error') },
    );
  }

  /** Stops answering. */
  async stop(): Promise<void> {
    await this.sub?.drain().catch(() => undefined);
    this.sub = null;
  }

  /** Answers one request (exported for tests through the public subject only). */
  async handle(subject: string, body: string): Promise<ApiReply> {
    let request: unknown;
    try {
      request = body.trim() === '' ? {} : JSON.parse(body);
    } catch (err) {
      return failure('invalid', `invalid JSON: ${(err as Error).message}`, '');
    }
    const state = this.state();
    switch (subject) {
      case subjects.apiSubmit:
        return this.submit(request, state);
      case subjects.apiJobGet: {
        const jobId = field(request, 'jobId');
        if (jobId === null) return failure('invalid', 'jobId must be a string', 'jobId');
        const job = shardGet(state.jobs, jobId);
        if (job === undefined) {
          const retired = retiredJob(state, jobId);
          if (retired === undefined) return failure('not-found', `unknown job ${jobId}`, 'jobId');
          return { ok: true, job: { id: jobId, status: retired.status, finishedAt: retired.finishedAt, retired: true }, seq: state.seq };
        }
        return { ok: true, job: { ...jobRow(job), allocations: job.allocations, pendReason: job.pendReason, spec: job.spec }, seq: state.seq };
      }
      case subjects.apiJobsList: {
        const status = field(request, 'status') ?? undefined;
        const limit = limitOf(request);
        if (limit === null) return failure('invalid', 'limit must be a positive integer', 'limit');
        return { ok: true, ...this.fitted('jobs', listJobs(state, status), limit), seq: state.seq };
      }
      case subjects.apiNodesList: {
        const limit = limitOf(request);
        if (limit === null) return failure('invalid', 'limit must be a positive integer', 'limit');
        return { ok: true, ...this.fitted('nodes', listNodes(state), limit), seq: state.seq };
      }
      case subjects.apiQueuesList:
        return { ok: true, queues: queueViews(state), seq: state.seq };
      case subjects.apiExplain: {
        const jobId = field(request, 'jobId');
        if (jobId === null) return failure('invalid', 'jobId must be a string', 'jobId');
        const explanation = explain(state, jobId);
        if (explanation === null && isRetired(state, jobId)) {
          return failure('not-found', `job ${jobId} finished and was retired from the state; muster audit --at SEQ --job ${jobId} tells its story`, 'jobId');
        }
        if (explanation === null) return failure('not-found', `unknown job ${jobId}`, 'jobId');
        return { ok: true, explanation, seq: state.seq };
      }
      default:
        return failure('not-found', `unknown API subject ${subject}`, '');
    }
  }

  /** A list under `key`, cut to `limit` and to what one reply can carry, with `total` and, when cut, `truncated`. */
  private fitted<T>(key: string, items: readonly T[], limit: number | undefined): Record<string, unknown> {
    const fit = fitList(items, limit, this.bus.maxPayload());
    return { [key]: fit.items, total: fit.total, ...(fit.truncated ? { truncated: true } : {}) };
  }

  /**
   * The refusal ingest would give a job for its queue, or null. A refusal from a state that has not
   * folded every input published so far may be stale (a queue set a moment ago): it stands only
   * once this replica has caught up with MUSTER_IN; if it cannot within QUEUE_CATCH_UP_MS, the
   * submission goes on and ingest decides.
   */
  private async queueRefusal(spec: JobSpec, state: State): Promise<ApiReply | null> {
    const refusal = (s: State): ApiReply | null => {
      if (s.queues === undefined) return null;
      const admitted = jobInQueue(s.queues, spec);
      return admitted.ok ? null : failure(admitted.error.category, admitted.error.message, admitted.error.path);
    };
    if (refusal(state) === null) return null;
    let target: number;
    try {
      target = await lastInputSequence(this.bus);
    } catch {
      // JetStream cannot say how far the inputs go: ingest decides
      return null;
    }
    const deadline = Date.now() + QUEUE_CATCH_UP_MS;
    for (let s = state; ; s = this.state()) {
      if (s.lastInputSeq >= target) return refusal(s);
      if (Date.now() > deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  private async submit(request: unknown, state: State): Promise<ApiReply> {
    const spec = validateJobSpec(request);
    if (!spec.ok) return failure('invalid', spec.error.message, spec.error.path);
    if (isJobIdTaken(state, spec.value.id)) {
      return failure('duplicate', `job ${spec.value.id} was already accepted`, 'id');
    }
    // once queues exist, the queue the job names must be a leaf and its limit within the queue's maximum (as ingest decides)
    const refused = await this.queueRefusal(spec.value, state);
    if (refused !== null) return refused;
    try {
      // forward the body as given: the leader validates it again at ingest, from the log's input
      const ack = await publishInput(this.bus, subjects.submit, request, submitMsgId(spec.value.id, request));
      return { ok: true, jobId: spec.value.id, inputSeq: ack.seq, duplicate: ack.duplicate };
    } catch (err) {
      this.log.warn({ err }, 'submit could not reach MUSTER_IN');
      return failure('unavailable', `MUSTER_IN did not accept the submission: ${(err as Error).message}`, '');
    }
  }
}

/** How long a submission refused by this replica's queues waits for the replica to fold the inputs before it (a queue just set). */
const QUEUE_CATCH_UP_MS = 2000;

function failure(code: ApiError['code'], message: string, path: string): ApiReply {
  return { ok: false, error: { code, message, path } };
}

/** A list request's `limit`: undefined when absent, null when not a positive integer. */
function limitOf(request: unknown): number | undefined | null {
  if (typeof request !== 'object' || request === null) return undefined;
  const value = (request as Record<string, unknown>).limit;
  if (value === undefined) return undefined;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

function field(request: unknown, name: string): string | null {
  if (typeof request !== 'object' || request === null) return null;
  const value = (request as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : null;
}
