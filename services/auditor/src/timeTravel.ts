import { applyTransaction, initialState, shardGet } from '@muster/core';
import type { JobState, SchedulerEvent, State, Transaction, TransactionKind } from '@muster/core';
import { openFeed } from './auditFeed.ts';
import type { AuditSource } from './auditSource.ts';
import { AuditorError } from './auditorError.ts';
import type { ChainBreak } from './chainVerifier.ts';
import { ChainVerifier } from './chainVerifier.ts';

/** The state as of a log sequence, and whether the chain up to it held (hash it with `stateHash` when needed: on a large state that costs more than the replay). */
export interface StateAt {
  seq: number;
  state: State;
  chain: { ok: boolean; brokenAt?: number; message?: string };
}

/** One event of a job's story, where the log holds it. */
export interface StoryEvent {
  seq: number;
  index: number;
  kind: TransactionKind;
  at: number;
  event: SchedulerEvent;
}

/** Every event about one job up to a sequence, and the job as it was then (null when not yet known). */
export interface JobStory {
  jobId: string;
  seq: number;
  events: StoryEvent[];
  job: JobState | null;
  chain: StateAt['chain'];
}

/** Replays a log up to and including `seq` (hash chain verified) and returns the state then. */
export async function stateAt(source: AuditSource, seq: number): Promise<StateAt> {
  return replayTo(source, seq, () => undefined);
}

/** Every event about `jobId` up to `seq`, with the job's state as of `seq`. */
export async function jobStory(source: AuditSource, jobId: string, seq: number): Promise<JobStory> {
  const events: StoryEvent[] = [];
  const at = await replayTo(source, seq, (s, tx) => {
    tx.events.forEach((event, index) => {
      if (isAbout(event, jobId)) events.push({ seq: s, index, kind: tx.kind, at: tx.at, event });
    });
  });
  return { jobId, seq: at.seq, events, job: shardGet(at.state.jobs, jobId) ?? null, chain: at.chain };
}

/** Whether an event concerns a job (names it, or submits it). */
export function isAbout(event: SchedulerEvent, jobId: string): boolean {
  if (event.type === 'JobSubmitted') return event.job.id === jobId;
  return 'jobId' in event && event.jobId === jobId;
}

async function replayTo(source: AuditSource, seq: number, visit: (seq: number, tx: Transaction) => void): Promise<StateAt> {
  if (!Number.isInteger(seq) || seq < 0) throw new AuditorError('bad-range', `the sequence must be a non-negative integer, got ${seq}`);
  const feed = await openFeed(source);
  if (feed.lastSeq !== null && seq > feed.lastSeq) throw new AuditorError('beyond-log', `the log ends at sequence ${feed.lastSeq}; there is no state as of ${seq}`);
  const state = initialState();
  const chain = new ChainVerifier();
  let broken: ChainBreak | null = null;
  if (seq > 0) {
    for await (const { seq: s, tx, payload } of feed.entries()) {
      if (s > seq) break;
      broken ??= chain.check(s, tx, payload);
      applyTransaction(state, s, tx);
      visit(s, tx);
      if (s === seq) break;
    }
  }
  if (state.seq < seq) throw new AuditorError('beyond-log', `the log ends at sequence ${state.seq}; there is no state as of ${seq}`);
  return { seq: state.seq, state, chain: broken === null ? { ok: true } : { ok: false, brokenAt: broken.seq, message: broken.message } };
}
