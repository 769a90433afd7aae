import type { AbortCategory } from '../events.ts';
import { cacheKeyOf } from './attempt.ts';
import { isElastic, requestFingerprint } from '../jobRequests.ts';
import { leafGet, shardLeaf } from '../shard.ts';
import { diffShards, settled } from '../shardDiff.ts';
import type { ShardPart } from '../shardDiff.ts';
import type { JobState, State } from '../state.ts';
import { bucketKey } from './jobQueue.ts';

/** A pending job as the order keeps it: its record in the state read, and where it sits. */
export interface OrderedJob {
  readonly job: JobState;
  readonly submitIndex: number;
  readonly id: string;
}

/**
 * A bucket's pending jobs that a session could pass over together, in the session's order within
 * a bucket (submission, then id): one plain request's cache key with the category the jobs'
 * recorded pend reasons have (`cacheKey` null: jobs every session tries, whatever its cache holds).
 */
export interface OrderedRun {
  readonly cacheKey: string | null;
  readonly recorded: AbortCategory | null;
  readonly jobs: OrderedJob[];
}

/** The pending jobs of one (priority, user, queue), by run. */
export interface OrderedBucket {
  readonly priority: number;
  readonly user: string;
  readonly queue: string;
  readonly runs: Map<string, OrderedRun>;
}

// recorded categories an attempt served from the cache can leave unwritten (`servedUnchanged`): a job recorded with another is tried by every session
const PASSABLE: ReadonlySet<AbortCategory> = new Set<AbortCategory>(['insufficient-resources', 'placement-unsatisfiable', 'no-matching-hosts', 'reserved']);

// one shard as last read: its leaves (frozen, so the same objects hold the same jobs) and the jobs it holds
interface ShardRead {
  pending: object | null;
  jobs: object | null;
  entries: Map<string, Placed>;
}

interface Placed {
  entry: OrderedJob;
  bucket: string;
  run: string;
}

/**
 * The pending jobs in each bucket's order, kept across sessions by the turn context (issue 32: a
 * session after a release reads the buckets instead of queueing and sorting the whole table),
 * patched from the shards whose pending or jobs leaf is not the very object read before. Never
 * part of the state; reads only what it is given.
 */
export class PendingOrder {
  private readonly shards = new Map<number, ShardRead>();
  // the tables as last read with every part and record frozen (null: none yet), and the shards
  // read since then that were not (they may have changed in place since)
  private readPending: ShardPart = null;
  private readJobs: ShardPart = null;
  private unsettled: number[] = [];
  private readonly table = new Map<string, OrderedBucket>();
  private reservedCount = 0;

  /** Brings the order up to the pending jobs of `state`; returns its buckets. */
  update(state: State): ReadonlyMap<string, OrderedBucket> {
    const removed = new Map<OrderedRun, Set<OrderedJob>>();
    const added = new Map<OrderedRun, OrderedJob[]>();
    // the shards whose pending or jobs leaf is not the very object read last, in shard order
    const changed = this.unsettled;
    const note = (shard: number): void => {
      changed.push(shard);
    };
    let frozen = diffShards(this.readPending, state.pending, note);
    frozen = diffShards(this.readJobs, state.jobs, note) && frozen;
    changed.sort((x, y) => x - y);
    const read: number[] = [];
    for (const shard of changed) {
      if (shard === read[read.length - 1]) continue;
      read.push(shard);
      frozen = this.read(shard, shardLeaf(state.pending, shard) ?? null, shardLeaf(state.jobs, shard) ?? null, removed, added) && frozen;
    }
    if (frozen) {
      this.readPending = state.pending;
      this.readJobs = state.jobs;
    }
    this.unsettled = frozen ? [] : read;
    for (const run of new Set([...removed.keys(), ...added.keys()])) patch(run, removed.get(run), added.get(run));
    for (const [key, bucket] of this.table) {
      for (const [name, run] of bucket.runs) if (run.jobs.length === 0) bucket.runs.delete(name);
      if (bucket.runs.size === 0) this.table.delete(key);
    }
    return this.table;
  }

  // Reads one shard again unless its leaves are the ones read last; false when a leaf may still change in place.
  private read(shard: number, pending: readonly string[] | null, jobs: readonly JobState[] | null, removed: Map<OrderedRun, Set<OrderedJob>>, added: Map<OrderedRun, OrderedJob[]>): boolean {
    const known = this.shards.get(shard);
    if (known !== undefined && known.pending === pending && known.jobs === jobs && pending !== null) return true;
    const entries = new Map<string, Placed>();
    let frozen = settled(pending) && settled(jobs);
    for (const id of pending ?? []) {
      const job = leafGet(jobs, id);
      if (job === undefined || job.status !== 'pending') continue;
      frozen &&= Object.isFrozen(job);
      const was = known?.entries.get(id);
      entries.set(id, was !== undefined && was.entry.job === job && Object.isFrozen(job) ? was : this.place(job, added));
    }
    if (known !== undefined) for (const [id, was] of known.entries) if (entries.get(id) !== was) this.unplace(was, removed);
    // a leaf that is not frozen may still change in place: read again next time
    if (entries.size === 0) this.shards.delete(shard);
    else this.shards.set(shard, { pending: frozen ? pending : null, jobs: frozen ? jobs : null, entries });
    return frozen;
  }

  /** Pending jobs with a reservation in the state last given to `update`. */
  get reserved(): number {
    return this.reservedCount;
  }

  private place(job: JobState, added: Map<OrderedRun, OrderedJob[]>): Placed {
    const spec = job.spec;
    const { user, queue } = spec.identity;
    const bucket = bucketKey(spec.priority, user, queue);
    const recorded = job.pendReason?.category;
    // what only a job of one plain request, without a reservation or a backoff, whose recorded
    // category the cache can hold, may be passed over for (the conditions of `unchangedMiss`)
    const plain = recorded !== undefined && PASSABLE.has(recorded) && job.reservation === undefined && job.notBefore === undefined && spec.alternatives === undefined && !isElastic(spec);
    const cacheKey = plain ? cacheKeyOf(job, requestFingerprint(job, 0)) : null;
    const run = cacheKey === null ? '' : `${cacheKey}\u0001${recorded}`;
    let b = this.table.get(bucket);
    if (b === undefined) {
      b = { priority: spec.priority, user, queue, runs: new Map() };
      this.table.set(bucket, b);
    }
    let r = b.runs.get(run);
    if (r === undefined) {
      r = { cacheKey, recorded: cacheKey === null ? null : recorded!, jobs: [] };
      b.runs.set(run, r);
    }
    const entry: OrderedJob = { job, submitIndex: job.submitIndex, id: spec.id };
    const list = added.get(r);
    if (list === undefined) added.set(r, [entry]);
    else list.push(entry);
    if (job.reservation !== undefined) this.reservedCount++;
    return { entry, bucket, run };
  }

  private unplace(was: Placed, removed: Map<OrderedRun, Set<OrderedJob>>): void {
    const run = this.table.get(was.bucket)!.runs.get(was.run)!;
    const set = removed.get(run);
    if (set === undefined) removed.set(run, new Set([was.entry]));
    else set.add(was.entry);
    if (was.entry.job.reservation !== undefined) this.reservedCount--;
  }
}

/** Whether `a` comes before `b` in a bucket's order (submission, then id). */
export function orderedBefore(a: OrderedJob, b: OrderedJob): boolean {
  return a.submitIndex !== b.submitIndex ? a.submitIndex < b.submitIndex : a.id < b.id;
}

// A run's jobs without those removed, with those added, in order: in place for a few, else merged.
function patch(run: OrderedRun, removed: ReadonlySet<OrderedJob> | undefined, added: OrderedJob[] | undefined): void {
  const jobs = run.jobs;
  const adds = added ?? [];
  const changes = (removed?.size ?? 0) + adds.length;
  if (changes * 16 < jobs.length) {
    // a few changes to a long run: each found by binary search (a session changes a few jobs)
    if (removed !== undefined) for (const e of removed) jobs.splice(position(jobs, e), 1);
    for (const e of adds) jobs.splice(position(jobs, e), 0, e);
    return;
  }
  adds.sort((a, b) => (orderedBefore(a, b) ? -1 : 1));
  const kept = removed === undefined ? jobs.slice() : jobs.filter((e) => !removed.has(e));
  jobs.length = 0;
  let i = 0;
  let j = 0;
  while (i < kept.length && j < adds.length) jobs.push(orderedBefore(adds[j]!, kept[i]!) ? adds[j++]! : kept[i++]!);
  while (i < kept.length) jobs.push(kept[i++]!);
  while (j < adds.length) jobs.push(adds[j++]!);
}

/** The index of the first job of `jobs` (in a bucket's order) not before `e`: where `e` is, or goes. */
export function position(jobs: readonly OrderedJob[], e: OrderedJob): number {
  let lo = 0;
  let hi = jobs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (orderedBefore(jobs[mid]!, e)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
