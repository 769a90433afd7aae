import { produce } from 'immer';
import { IN_PLACE, copyOnWrite, emptyRecord } from './copyOnWrite.ts';
import type { Writer } from './copyOnWrite.ts';
import type { LoggedTransaction, Transaction } from './envelope.ts';
import type {
  Allocation,
  AllocationReleased,
  AllocationResources,
  GangAborted,
  GangCommitted,
  GangResized,
  GangRestarting,
  JobFinished,
  JobsRetired,
  Rendezvous,
  SchedulerEvent,
} from './events.ts';
import { addResources, zeroResources } from './resources.ts';
import type { Resources } from './resources.ts';
import { SHARD_FANOUT, emptySharded, entryId, leafGet, leafIndex, shardLeaf, shardLeaves, shardOf } from './shard.ts';
import { isJobIdTaken, jobRetireProblem } from './retire.ts';
import type { ShardEntry, ShardLeaf, ShardLevel, Sharded } from './shard.ts';
import type { DecayedUse, JobState, LastFailure, MemberState, NodeState, Reservation, RetiredJob, State } from './state.ts';
import { decayedAt } from './queues/decayedUse.ts';
import { parseSelect } from './select/index.ts';
import { DEFAULT_POLICY, MAX_GANG_SIZE, unsatisfiableKey } from './contract/index.ts';
import { activeRequest, isElastic, requestSize } from './jobRequests.ts';
import type { Identity, NodeSpec, QueueSpec } from './contract/types.ts';

// evolve: the one recipe that folds a fact into state, and the drivers that run it.
//
// `apply(state, event, w)` mutates what it is given. It is total: a fact that does not apply (an
// unknown job, a stale node) changes nothing and never throws, because the log is history and
// history cannot be refused. It is written once and run by three drivers (CONVENTIONS: one
// function, two drivers; the third is the trivial one):
//   - copy-on-write: `fold` and `foldTransactions` for replay and catch-up, and the core's turn
//     (turn.ts, the session included) for what a leader appends: each event applied once, in a
//     run per phase. No proxies: `copyOnWrite` hands `apply` a shallow copy of the root,
//     and every object `apply` mutates is copied once per run on its way down (copyOnWrite.ts).
//     The result shares everything the run did not touch with the input, the input is never
//     written to, and every object the run copied or made is frozen at the end, so a stray write
//     into a shared object throws, as it does into immer's output. Measured about 10x faster
//     than immer per batch of 1000 events and several times faster per event (docs/benchmarks.md).
//   - immer: `evolve` (one event, one `produce`), kept as the reference the fold is tested
//     against and for callers that want immer's drafts; the result is frozen by autoFreeze.
//   - in place: a private mutable state nobody else holds (a benchmark's upper bound).
// So that one recipe serves all three, `apply` keeps two rules:
//   1. It reads freely, but reaches every object it mutates through its writer's
//      `w.writable(parent, key)` (`writableNode`, `writableJob` below), starting from the root it
//      was given, and registers each object it makes and will mutate later in the batch with
//      `w.created()`. Under immer and in place (`IN_PLACE`), `writable` is just `parent[key]`; in
//      a copy-on-write run it is the copy, and the run (not the module) remembers what it copied.
//   2. Values taken from events (specs, member lists, GPU ids, allocations, reasons) are stored by
//      reference and never mutated in place, here or anywhere: they are replaced whole.
// evolve.test.ts proves, over generated event streams, that `fold` gives the same canonical state
// as `produce` running `apply` over the same events, and leaves its input untouched.

/** Categories that mean "every plan was exhausted": those enter the unsatisfiable cache. */
const EXHAUSTED: ReadonlySet<string> = new Set(['insufficient-resources', 'no-matching-hosts', 'placement-unsatisfiable']);

/** Applies one event to a mutable state (an immer draft, a private copy, or a copy-on-write root). */
export function apply(state: State, event: SchedulerEvent, w: Writer = IN_PLACE): void {
  switch (event.type) {
    case 'LeaderElected':
      state.term = Math.max(state.term, event.term);
      state.leader = event.leader;
      return;
    case 'NodeRegistered':
      seenInput(state, event.inputSeq);
      registerNode(w, state, event.node);
      return;
    case 'NodeDrained': {
      seenInput(state, event.inputSeq);
      const n = shardOf(event.nodeId);
      const node = entry(state.nodes, n, event.nodeId);
      if (node === undefined || node.status !== 'up') return;
      writableNode(w, state, n, node).status = 'drained';
      addCapacity(w, state, node.spec, -1);
      return;
    }
    case 'NodeLost': {
      if (event.inputSeq !== undefined) seenInput(state, event.inputSeq);
      const n = shardOf(event.nodeId);
      const node = entry(state.nodes, n, event.nodeId);
      if (node === undefined || node.status === 'lost') return;
      if (node.status === 'up') addCapacity(w, state, node.spec, -1);
      writableNode(w, state, n, node).status = 'lost';
      return;
    }
    case 'JobSubmitted':
      seenInput(state, event.inputSeq);
      submitJob(w, state, event.job, event.fingerprint, event.fingerprints);
      return;
    case 'JobRejected':
    case 'InputRejected':
    case 'JobCancelled':
    case 'JobClosed':
      // The decisions these inputs lead to follow as their own events.
      seenInput(state, event.inputSeq);
      return;
    case 'TaskCompleted': {
      seenInput(state, event.inputSeq);
      const n = shardOf(event.jobId);
      const job = entry(state.jobs, n, event.jobId);
      const member = job?.members[event.member];
      if (job === undefined || member === undefined || member === null || member.done) return;
      w.writable(writableJob(w, state, n, job), 'members')[event.member] = memberWith(w, member, true, event.ok, member.released);
      return;
    }
    case 'SessionStarted':
      state.session = Math.max(state.session, event.session);
      state.sessionEpoch = state.epoch;
      state.unsatisfiable = w.created(emptyRecord());
      if (state.guarded !== undefined) unguardExpired(w, state, event.at);
      if (state.restarting !== undefined) restartsDue(w, state, event.at);
      return;
    case 'HostDebited': {
      debit(w, state, event.node, event.resources, event.gpuIds, 1);
      const n = shardOf(event.jobId);
      const job = entry(state.jobs, n, event.jobId);
      if (job === undefined) return;
      w.writable(writableJob(w, state, n, job), 'provisional').push(w.created({
        node: event.node,
        role: event.role,
        members: event.members,
        resources: event.resources,
        gpuIds: event.gpuIds,
      }));
      return;
    }
    case 'DebitReversed': {
      debit(w, state, event.node, event.resources, event.gpuIds, -1);
      const n = shardOf(event.jobId);
      const job = entry(state.jobs, n, event.jobId);
      if (job === undefined) return;
      const i = job.provisional.findIndex((d) => d.node === event.node && d.role === event.role);
      if (i >= 0) w.writable(writableJob(w, state, n, job), 'provisional').splice(i, 1);
      return;
    }
    case 'MemberBound': {
      const n = shardOf(event.jobId);
      const job = entry(state.jobs, n, event.jobId);
      if (job === undefined || event.member < 0) return;
      if (event.member >= job.members.length) {
        // a job with alternatives has no size until a variant commits: its binds (before the
        // GangCommitted) size it, gaps unbound (an elastic role's members not placed); any other
        // job's members are sized at submission
        if (job.spec.alternatives === undefined || event.member >= MAX_GANG_SIZE) return;
        const members = w.writable(writableJob(w, state, n, job), 'members');
        while (members.length <= event.member) members.push(null);
      }
      w.writable(writableJob(w, state, n, job), 'members')[event.member] = w.created<MemberState>({
        node: event.node,
        role: event.role,
        gpuIds: event.gpuIds,
        done: false,
        ok: false,
        released: false,
      });
      return;
    }
    case 'GangCommitted':
      commitGang(w, state, event);
      return;
    case 'GangResized':
      resizeGang(w, state, event);
      return;
    case 'GangAborted':
      abortGang(w, state, event);
      return;
    case 'JobPended': {
      const n = shardOf(event.jobId);
      const job = entry(state.jobs, n, event.jobId);
      if (job === undefined) return;
      const written = writableJob(w, state, n, job);
      written.status = 'pending';
      written.pendingSince = event.at;
      written.pendingEpoch = ++state.epoch;
      pend(w, state, n, event.jobId);
      return;
    }
    case 'JobFinished':
      finishJob(w, state, event);
      return;
    case 'GangRestarting':
      restartGang(w, state, event);
      return;
    case 'ContractSet':
      state.contract = event.version;
      return;
    case 'AllocationReleased':
      releaseAllocation(w, state, event);
      return;
    case 'JobsRetired':
      retireJobs(w, state, event);
      return;
    case 'Checkpoint':
      state.lastCheckpoint = w.created({ seq: event.seq, stateHash: event.stateHash });
      return;
    case 'PolicySet':
      if (event.inputSeq !== undefined) seenInput(state, event.inputSeq);
      state.policy = w.created({ ...(state.policy ?? DEFAULT_POLICY), ...event.policy });
      if (state.policy.fairShareHalfLifeMs !== undefined && state.decayed === undefined) {
        // decayed use starts now, from nothing, for every queue that uses something
        const decayed = w.created(emptyRecord<DecayedUse>());
        for (const name of Object.keys(state.usage.queues)) decayed[name] = w.created({ cpu: 0, memoryMb: 0, gpus: 0, at: state.lastAt });
        state.decayed = decayed;
      }
      // every pending job may decide differently under another policy
      state.freeEpoch = ++state.epoch;
      return;
    case 'QueueSet':
      seenInput(state, event.inputSeq);
      if (state.queues === undefined) state.queues = w.created(emptyRecord<QueueSpec>());
      w.writableRecord(state, 'queues')![event.queue.name] = event.queue;
      // quotas, guarantees and the order may all change
      state.freeEpoch = ++state.epoch;
      return;
    case 'GangReserved': {
      const n = shardOf(event.jobId);
      const job = entry(state.jobs, n, event.jobId);
      if (job === undefined || job.status !== 'pending') return;
      const reservation: Reservation = { startAt: event.startAt, hosts: event.hosts, session: event.session };
      if (event.alternative !== undefined && job.spec.alternatives !== undefined) reservation.alternative = event.alternative;
      writableJob(w, state, n, job).reservation = w.created(reservation);
      return;
    }
    case 'ReservationCleared': {
      const n = shardOf(event.jobId);
      const job = entry(state.jobs, n, event.jobId);
      if (job?.reservation === undefined) return;
      delete writableJob(w, state, n, job).reservation;
      // a reserved job that left the queue between sessions frees a place among the reserved
      if (event.reason === 'cancelled') state.freeEpoch = ++state.epoch;
      return;
    }
    default: {
      // A type the catalogue does not know is a newer writer's fact: it changes nothing here.
      const _exhaustive: never = event;
      return;
    }
  }
}

/** Applies a transaction read from the log: its sequence, stamped time, and every event in order. */
export function applyTransaction(state: State, seq: number, tx: Transaction, w: Writer = IN_PLACE): void {
  openTransaction(state, seq, tx);
  for (const event of tx.events) apply(state, event, w);
}

/** What a transaction's envelope does to the state before its events: its sequence, stamped time and term. */
export function openTransaction(state: State, seq: number, stamp: { at: number; term: number }): void {
  state.seq = seq;
  state.lastAt = Math.max(state.lastAt, stamp.at);
  if (stamp.term > state.term) state.term = stamp.term;
}

/** One event folded into a new immutable state, in one immer `produce` (live transactions). */
export function evolve(state: State, event: SchedulerEvent): State {
  return produce(state, (draft) => {
    apply(draft, event);
  });
}

/**
 * A batch of events folded into a new frozen state by copy-on-write: the same canonical state as
 * one `produce` over the batch, sharing everything untouched with `state`, which is left as it was.
 */
export function fold(state: State, events: readonly SchedulerEvent[]): State {
  if (events.length === 0) return state;
  return copyOnWrite(state, (root, w) => {
    for (const event of events) apply(root, event, w);
  });
}

/** A batch of logged transactions folded like `fold` (copy-on-write, one copy per touched object). */
export function foldTransactions(state: State, txs: readonly LoggedTransaction[]): State {
  if (txs.length === 0) return state;
  return copyOnWrite(state, (root, w) => {
    for (const { seq, tx } of txs) applyTransaction(root, seq, tx, w);
  });
}

// ---- reads and writable paths: every mutation of a node, a job or a table goes down these ----

/** The entry `id` of a sharded table, in shard `shard`. */
function entry<T extends ShardEntry>(table: Sharded<T>, shard: number, id: string): T | undefined {
  return leafGet(shardLeaf(table, shard), id);
}

/** A host's member count for a job; a number is never inherited, so the id may be `constructor`. */
function held(jobs: Record<string, number>, jobId: string): number | undefined {
  const n = jobs[jobId];
  return typeof n === 'number' ? n : undefined;
}

/**
 * `node`, just read from `state` (shard `shard`), made writable. An entity that is writable
 * already has a writable path above it, so the common case is one lookup.
 */
function writableNode(w: Writer, state: State, shard: number, node: NodeState): NodeState {
  if (w.isWritable(node)) return node;
  const leaf = writableLeaf(w, w.writable(state, 'nodes'), shard);
  return w.writable(leaf, leafIndex(leaf, node.spec.id));
}

/** `job`, just read from `state` (shard `shard`), made writable. */
function writableJob(w: Writer, state: State, shard: number, job: JobState): JobState {
  if (w.isWritable(job)) return job;
  const leaf = writableLeaf(w, w.writable(state, 'jobs'), shard);
  return w.writable(leaf, leafIndex(leaf, job.spec.id));
}

/** The leaf of `shard` in a writable table, writable, made (levels too) when it is missing. */
function writableLeaf<T extends ShardEntry>(w: Writer, table: Sharded<T>, shard: number): ShardLeaf<T> {
  const level2 = slot(w, table, shard >>> 8, newLevel<ShardLevel<ShardLeaf<T>>>);
  const level3 = slot(w, level2, (shard >>> 4) & 15, newLevel<ShardLeaf<T>>);
  return slot(w, level3, shard & 15, newLeaf<T>);
}

function slot<C extends object>(w: Writer, level: ShardLevel<C>, i: number, make: () => C): C {
  return level[i] === null || level[i] === undefined ? (level[i] = w.created(make())) : w.writable(level, i)!;
}

function newLeaf<T extends ShardEntry>(): ShardLeaf<T> {
  return [];
}

function newLevel<C>(): ShardLevel<C> {
  return new Array<null>(SHARD_FANOUT).fill(null);
}

/** Puts `value` into a writable table, in id order (replacing an entry with the same id). */
function insert<T extends ShardEntry>(w: Writer, table: Sharded<T>, shard: number, value: T): void {
  const leaf = writableLeaf(w, table, shard);
  const i = leafIndex(leaf, entryId(value));
  if (i >= 0) leaf[i] = value;
  else insertAt(leaf, -i - 1, value);
}

/** Puts a job into the pending table (nothing when it is there already). */
function pend(w: Writer, state: State, shard: number, id: string): void {
  if (entry(state.pending, shard, id) === undefined) insert(w, w.writable(state, 'pending'), shard, id);
}

/** Takes a job out of the pending table, clearing every trie slot it leaves empty. */
function unpend(w: Writer, state: State, shard: number, id: string): void {
  remove(w, state, 'pending', shard, id);
}

/** Puts a running gang with a runtime limit into the table of limited gangs (made on first use). */
function limit(w: Writer, state: State, shard: number, id: string): void {
  enlist(w, state, 'limited', shard, id);
}

/** Puts job `id` into one of the state's tables of ids, made on first use (once: it may be there already). */
function enlist(w: Writer, state: State, key: 'limited' | 'guarded' | 'elastic' | 'restarting', shard: number, id: string): void {
  if (state[key] === undefined) state[key] = w.created(emptySharded<string>());
  if (entry(state[key], shard, id) === undefined) insert(w, w.writable(state, key) as Sharded<string>, shard, id);
}

/** A gang stops running: out of the tables of limited, guarded and elastic gangs (if it is there). */
function unlimit(w: Writer, state: State, shard: number, id: string): void {
  if (state.limited !== undefined) remove(w, state, 'limited', shard, id);
  if (state.guarded !== undefined) remove(w, state, 'guarded', shard, id);
  if (state.elastic !== undefined) remove(w, state, 'elastic', shard, id);
}

/** Puts a running elastic gang below its full size into the table of gangs a session may grow. */
function elasticize(w: Writer, state: State, shard: number, id: string): void {
  enlist(w, state, 'elastic', shard, id);
}

/** Whether a gang with these allocations holds fewer members than its request in force has (an elastic role not at its count). */
function belowFullSize(job: JobState, allocations: readonly Allocation[]): boolean {
  const request = activeRequest(job);
  if (!isElastic(request)) return false;
  let held = 0;
  for (const a of allocations) held += a.members.length;
  return held < requestSize(request);
}

/** Puts a gang just committed under a minimum runtime before preemption into the guarded table. */
function guard(w: Writer, state: State, shard: number, id: string): void {
  enlist(w, state, 'guarded', shard, id);
}

/** A session at `at`: gangs whose guard ran out by then leave the guarded table (they may be victims now). */
function unguardExpired(w: Writer, state: State, at: number): void {
  const guarded = state.guarded!;
  const min = state.policy?.minRuntimeBeforePreemptionMs ?? 0;
  const expired: [number, string][] = [];
  for (const [shard, ids] of shardLeaves(guarded)) {
    const jobs = shardLeaf(state.jobs, shard);
    for (const id of ids) {
      const committedAt = leafGet(jobs, id)?.committedAt;
      if (committedAt === undefined || committedAt + min <= at) expired.push([shard, id]);
    }
  }
  for (const [shard, id] of expired) remove(w, state, 'guarded', shard, id);
}

/** Takes entry `id` out of one of the state's tables, clearing every trie slot it leaves empty. */
function remove(w: Writer, state: State, key: 'pending' | 'jobs' | 'limited' | 'guarded' | 'elastic' | 'restarting', shard: number, id: string): void {
  const table0 = state[key];
  if (table0 === undefined) return;
  const leaf = shardLeaf<ShardEntry>(table0, shard);
  if (leaf === null || leaf === undefined) return;
  const i = leafIndex(leaf, id);
  if (i < 0) return;
  const a = shard >>> 8;
  const b = (shard >>> 4) & 15;
  const c = shard & 15;
  const table = w.writable(state, key) as Sharded<ShardEntry>;
  if (leaf.length > 1) removeAt(writableLeaf(w, table, shard), i);
  else if (othersInUse(table[a]![b]!, c)) w.writable(w.writable(table, a)!, b)![c] = null;
  else if (othersInUse(table[a]!, b)) w.writable(table, a)![b] = null;
  else table[a] = null;
}

/** Moves finished jobs out of `jobs` into `retired` (ids that may not be retired are left alone). */
function retireJobs(w: Writer, state: State, event: JobsRetired): void {
  for (const id of event.jobIds) {
    const n = shardOf(id);
    const job = entry(state.jobs, n, id);
    if (job === undefined || jobRetireProblem(state, job, event.at, event.retainMs) !== null) continue;
    const retired: RetiredJob = w.created({ spec: w.created({ id }), status: job.status, finishedAt: job.finishedAt ?? event.at });
    remove(w, state, 'jobs', n, id);
    if (state.retired === undefined) state.retired = w.created(emptySharded<RetiredJob>());
    insert(w, w.writable(state, 'retired') as Sharded<RetiredJob>, n, retired);
  }
}

// splice() would allocate the array of removed elements on every call
function insertAt<T>(list: T[], at: number, value: T): void {
  for (let j = list.length; j > at; j--) list[j] = list[j - 1]!;
  list[at] = value;
}

function removeAt<T>(list: T[], at: number): void {
  for (let j = at + 1; j < list.length; j++) list[j - 1] = list[j]!;
  list.length--;
}

/** Whether a level has a non-empty slot other than `i`. */
function othersInUse(level: readonly unknown[], i: number): boolean {
  for (let j = 0; j < level.length; j++) if (j !== i && level[j] !== null && level[j] !== undefined) return true;
  return false;
}

// ---- the effects ----

function seenInput(state: State, inputSeq: number): void {
  if (inputSeq > state.lastInputSeq) state.lastInputSeq = inputSeq;
}

function addCapacity(w: Writer, state: State, spec: NodeSpec, factor: 1 | -1): void {
  const capacity = w.writable(state, 'capacity');
  capacity.cpu += spec.capacity.cpu * factor;
  capacity.memoryMb += spec.capacity.memoryMb * factor;
  capacity.slots += (spec.capacity.slots ?? 0) * factor;
  capacity.gpus += spec.gpus.length * factor;
}

function registerNode(w: Writer, state: State, spec: NodeSpec): void {
  const n = shardOf(spec.id);
  const existing = entry(state.nodes, n, spec.id);
  if (existing === undefined) {
    const node: NodeState = { spec, status: 'up', used: w.created(zeroResources()), gpusUsed: [], jobs: w.created(emptyRecord()) };
    insert(w, w.writable(state, 'nodes'), n, w.created(node));
  } else {
    if (existing.status === 'up') addCapacity(w, state, existing.spec, -1);
    const node = writableNode(w, state, n, existing);
    node.spec = spec;
    node.status = 'up';
  }
  addCapacity(w, state, spec, 1);
  state.freeEpoch = ++state.epoch;
}

function submitJob(w: Writer, state: State, spec: JobState['spec'], fingerprint: string, fingerprints: string[] | undefined): void {
  const n = shardOf(spec.id);
  if (isJobIdTaken(state, spec.id)) return;
  // a job with alternatives: each variant's select is compiled where it is used (requestSelectAst),
  // and its members are sized by the variant that commits
  const parsed = spec.alternatives !== undefined || spec.select.trim() === '' ? null : parseSelect(spec.select);
  let size = 0;
  if (spec.alternatives === undefined) for (const role of spec.roles) size += role.count;
  const job: JobState = {
    spec,
    fingerprint,
    selectAst: parsed !== null && parsed.ok ? parsed.ast : null,
    status: 'pending',
    submitIndex: state.nextSubmitIndex++,
    submittedAt: state.lastAt,
    pendingSince: state.lastAt,
    pendingEpoch: ++state.epoch,
    session: null,
    allocations: [],
    members: w.created(new Array<null>(size).fill(null)),
    provisional: w.created([]),
    pendReason: null,
    finishedAt: null,
  };
  if (spec.alternatives !== undefined) job.fingerprints = fingerprints ?? [];
  insert(w, w.writable(state, 'jobs'), n, w.created(job));
  insert(w, w.writable(state, 'pending'), n, spec.id);
}

/** Debits (factor 1) or credits (-1) a node's use; GPU ids stay ascending and distinct. */
function debit(w: Writer, state: State, nodeId: string, resources: Resources, gpuIds: readonly number[], factor: 1 | -1): void {
  const n = shardOf(nodeId);
  const node = entry(state.nodes, n, nodeId);
  if (node === undefined) return;
  const written = writableNode(w, state, n, node);
  addResources(w.writable(written, 'used'), resources, factor);
  // an empty id list leaves `gpusUsed` as it is (it is ascending and distinct by construction)
  if (gpuIds.length === 0) return;
  written.gpusUsed = w.created(factor === 1 ? ascendingUnion(node.gpusUsed, gpuIds) : node.gpusUsed.filter((id) => !gpuIds.includes(id)));
}

/** The ascending, distinct union of `used` (ascending, distinct) and `add`, as a new array. */
function ascendingUnion(used: readonly number[], add: readonly number[]): number[] {
  const out = used.slice();
  for (const id of add) {
    let i = out.length;
    while (i > 0 && out[i - 1]! > id) i--;
    if (i > 0 && out[i - 1] === id) continue;
    out.splice(i, 0, id);
  }
  return out;
}

function addUsage(w: Writer, state: State, identity: Identity, amount: AllocationResources, factor: 1 | -1): void {
  const usage = w.writable(state, 'usage');
  addUsageRow(w, w.writableRecord(usage, 'users'), identity.user, amount, factor);
  const queues = w.writableRecord(usage, 'queues');
  if (state.decayed !== undefined) advanceDecayed(w, state, identity.queue, queues[identity.queue]);
  addUsageRow(w, queues, identity.queue, amount, factor);
}

/** Brings a queue's decayed use up to the state's stamp, under the use it had until now. */
function advanceDecayed(w: Writer, state: State, queue: string, use: AllocationResources | undefined): void {
  const table = w.writableRecord(state, 'decayed')!;
  const was = Object.hasOwn(table, queue) ? table[queue]! : undefined;
  const at = state.lastAt;
  table[queue] = w.created(was === undefined ? { cpu: 0, memoryMb: 0, gpus: 0, at } : decayedAt(was, use, at, state.policy!.fairShareHalfLifeMs!));
}

function addUsageRow(w: Writer, table: Record<string, AllocationResources>, key: string, amount: AllocationResources, factor: 1 | -1): void {
  const row = Object.hasOwn(table, key) ? w.writable(table, key) : (table[key] = w.created({ cpu: 0, memoryMb: 0, gpus: 0 }));
  row.cpu += amount.cpu * factor;
  row.memoryMb += amount.memoryMb * factor;
  row.gpus += amount.gpus * factor;
  if (row.cpu === 0 && row.memoryMb === 0 && row.gpus === 0) delete table[key];
}

function commitGang(w: Writer, state: State, event: GangCommitted): void {
  const n = shardOf(event.jobId);
  const job = entry(state.jobs, n, event.jobId);
  if (job === undefined) return;
  const written = writableJob(w, state, n, job);
  written.status = 'running';
  written.session = event.session;
  // a commit ends a reservation; the commit time is kept under a policy (runtime limits, planning)
  if (job.reservation !== undefined) delete written.reservation;
  if (state.policy !== undefined) {
    written.committedAt = event.at;
    if (job.spec.runtimeLimitMs !== undefined) limit(w, state, n, event.jobId);
    if (state.queues !== undefined && (state.policy.minRuntimeBeforePreemptionMs ?? 0) > 0) guard(w, state, n, event.jobId);
  }
  written.allocations = event.allocations;
  if (event.alternative !== undefined && job.spec.alternatives !== undefined) written.alternative = event.alternative;
  if (event.rendezvous !== undefined) holdRendezvous(w, state, written, event.rendezvous);
  // an elastic gang committed below its full size may grow in later sessions (DESIGN.md §13)
  if (belowFullSize(written, event.allocations)) elasticize(w, state, n, event.jobId);
  if (job.provisional.length > 0) written.provisional = w.created([]);
  written.pendReason = null;
  unpend(w, state, n, event.jobId);
  for (const a of event.allocations) {
    addUsage(w, state, job.spec.identity, a.resources, 1);
    const nodeShard = shardOf(a.node);
    const node = entry(state.nodes, nodeShard, a.node);
    if (node === undefined) continue;
    const jobs = w.writableRecord(writableNode(w, state, nodeShard, node), 'jobs');
    jobs[event.jobId] = (held(jobs, event.jobId) ?? 0) + a.members.length;
  }
}

/**
 * An elastic gang's new size (DESIGN.md §13): grown, its attempt's debits (the members added) join
 * its use and its nodes' member counts; shrunk, the members it gave up (released just before) are
 * unbound, so their numbers may be bound again by a later growth.
 */
function resizeGang(w: Writer, state: State, event: GangResized): void {
  const n = shardOf(event.jobId);
  const job = entry(state.jobs, n, event.jobId);
  if (job === undefined || job.status !== 'running') return;
  const written = writableJob(w, state, n, job);
  for (const d of job.provisional) {
    addUsage(w, state, job.spec.identity, { cpu: d.resources.cpu, memoryMb: d.resources.memoryMb, gpus: d.resources.gpus }, 1);
    const nodeShard = shardOf(d.node);
    const node = entry(state.nodes, nodeShard, d.node);
    if (node === undefined) continue;
    const jobs = w.writableRecord(writableNode(w, state, nodeShard, node), 'jobs');
    jobs[event.jobId] = (held(jobs, event.jobId) ?? 0) + d.members.length;
  }
  if (job.provisional.length > 0) written.provisional = w.created([]);
  written.allocations = event.allocations;
  const kept = new Set<number>();
  for (const a of event.allocations) for (const m of a.members) kept.add(m);
  let members: (MemberState | null)[] | undefined;
  job.members.forEach((m, i) => {
    if (m === null || kept.has(i)) return;
    members ??= w.writable(written, 'members');
    members[i] = null;
  });
  if (belowFullSize(written, event.allocations)) elasticize(w, state, n, event.jobId);
  else if (state.elastic !== undefined) remove(w, state, 'elastic', n, event.jobId);
}

function abortGang(w: Writer, state: State, event: GangAborted): void {
  const n = shardOf(event.jobId);
  const job = entry(state.jobs, n, event.jobId);
  if (job === undefined) return;
  const written = writableJob(w, state, n, job);
  written.pendReason = event.reason;
  if (event.final) {
    written.status = event.reason.category === 'timeout' ? 'timedout' : event.reason.category === 'runtime-limit' ? 'runtime-limit' : 'cancelled';
    if (job.reservation !== undefined) delete written.reservation;
    if (job.committedAt !== undefined) delete written.committedAt;
    written.finishedAt = event.at;
    unpend(w, state, n, event.jobId);
    unlimit(w, state, n, event.jobId);
    releaseRendezvous(w, state, written);
    unrestart(w, state, n, written);
    return;
  }
  if (event.reason.category === 'node-lost' || event.reason.category === 'preempted') {
    // The releases came first; the gang is forgotten as a unit and JobPended requeues it. A gang
    // committed under contract v1.2 (it has a rendezvous) starts its next attempt, not counted
    // against its failure policy's restarts.
    if (job.rendezvous !== undefined) written.attempt = (job.attempt ?? 0) + 1;
    forgetGang(w, state, n, written);
    return;
  }
  if (event.reason.alternatives !== undefined && job.fingerprints !== undefined) {
    // each variant keys the cache with its own fingerprint and the way it failed (DESIGN.md §13)
    event.reason.alternatives.forEach((outcome, i) => {
      const fingerprint = job.fingerprints![i];
      if (fingerprint === undefined || outcome.cached === true || !EXHAUSTED.has(outcome.category)) return;
      w.writableRecord(state, 'unsatisfiable')[unsatisfiableKey(fingerprint, job.spec.identity)] = outcome.category;
    });
  } else if (event.reason.cached !== true && EXHAUSTED.has(event.reason.category)) {
    w.writableRecord(state, 'unsatisfiable')[unsatisfiableKey(job.fingerprint, job.spec.identity)] = event.reason.category;
  }
}

/**
 * A running gang stopped whole and requeued (node loss, preemption, a restart): its releases came
 * first; its allocations, members, variant, commit and rendezvous are forgotten.
 */
function forgetGang(w: Writer, state: State, n: number, written: JobState): void {
  written.allocations = w.created([]);
  // a job with alternatives is requeued with no variant in force: the next commit sizes it anew
  written.members = w.created(written.spec.alternatives === undefined ? written.members.map(() => null) : []);
  if (written.alternative !== undefined) delete written.alternative;
  written.session = null;
  if (written.committedAt !== undefined) delete written.committedAt;
  unlimit(w, state, n, written.spec.id);
  releaseRendezvous(w, state, written);
}

function finishJob(w: Writer, state: State, event: JobFinished): void {
  const n = shardOf(event.jobId);
  const job = entry(state.jobs, n, event.jobId);
  if (job === undefined) return;
  const written = writableJob(w, state, n, job);
  written.status = event.outcome;
  written.finishedAt = event.at;
  unpend(w, state, n, event.jobId);
  unlimit(w, state, n, event.jobId);
  releaseRendezvous(w, state, written);
  if (event.member !== undefined && event.node !== undefined) written.lastFailure = w.created(lastFailure(event.member, event.node, event));
}

/**
 * A member's failure restarts its gang (contract v1.2): the releases came first; the job is
 * pending again on its next attempt, not placed before `notBefore`.
 */
function restartGang(w: Writer, state: State, event: GangRestarting): void {
  const n = shardOf(event.jobId);
  const job = entry(state.jobs, n, event.jobId);
  if (job === undefined || job.status !== 'running') return;
  const written = writableJob(w, state, n, job);
  forgetGang(w, state, n, written);
  written.status = 'pending';
  written.pendingSince = event.at;
  written.pendingEpoch = ++state.epoch;
  written.attempt = event.attempt;
  written.restarts = (job.restarts ?? 0) + 1;
  written.lastFailure = w.created(lastFailure(event.member, event.node, event));
  written.notBefore = event.notBefore;
  pend(w, state, n, event.jobId);
  enlist(w, state, 'restarting', n, event.jobId);
}

function lastFailure(member: number, node: string, how: { exitCode?: number; signal?: string; at: number }): LastFailure {
  const failure: LastFailure = { member, node, at: how.at };
  if (how.exitCode !== undefined) failure.exitCode = how.exitCode;
  if (how.signal !== undefined) failure.signal = how.signal;
  return failure;
}

/** A job leaves the table of jobs waiting out a restart's backoff, and forgets its `notBefore`. */
function unrestart(w: Writer, state: State, n: number, written: JobState): void {
  if (written.notBefore === undefined) return;
  delete written.notBefore;
  remove(w, state, 'restarting', n, written.spec.id);
}

/** A session at `at`: jobs whose restart backoff ran out by then may be placed (they leave the table). */
function restartsDue(w: Writer, state: State, at: number): void {
  const due: [number, JobState][] = [];
  for (const [shard, ids] of shardLeaves(state.restarting!)) {
    const jobs = shardLeaf(state.jobs, shard);
    for (const id of ids) {
      const job = leafGet(jobs, id);
      if (job !== undefined && (job.notBefore ?? at) <= at) due.push([shard, job]);
    }
  }
  for (const [shard, job] of due) unrestart(w, state, shard, writableJob(w, state, shard, job));
}

/** Holds a committed gang's rendezvous port on its node (contract v1.2). */
function holdRendezvous(w: Writer, state: State, written: JobState, rendezvous: Rendezvous): void {
  written.rendezvous = rendezvous;
  const shard = shardOf(rendezvous.node);
  const node = entry(state.nodes, shard, rendezvous.node);
  if (node === undefined) return;
  writableNode(w, state, shard, node).rendezvousPorts = w.created(ascendingUnion(node.rendezvousPorts ?? [], [rendezvous.port]));
}

/** Gives a gang's rendezvous port back to its node, if it holds one. */
function releaseRendezvous(w: Writer, state: State, written: JobState): void {
  const rendezvous = written.rendezvous;
  if (rendezvous === undefined) return;
  delete written.rendezvous;
  const shard = shardOf(rendezvous.node);
  const node = entry(state.nodes, shard, rendezvous.node);
  if (node?.rendezvousPorts === undefined) return;
  const left = node.rendezvousPorts.filter((p) => p !== rendezvous.port);
  const wn = writableNode(w, state, shard, node);
  if (left.length === 0) delete wn.rendezvousPorts;
  else wn.rendezvousPorts = w.created(left);
}

/**
 * A member record with new flags, written as a literal: V8 keeps all six fields inside such an
 * object, where a spread copy (`w.writable`) keeps some in a separate array (24 bytes more a
 * member). One without devices is shared (`w.shared`) with every equal record, by node, role and
 * flags: a finished job keeps every member, and its members' records repeat across jobs.
 */
function memberWith(w: Writer, m: MemberState, done: boolean, ok: boolean, released: boolean): MemberState {
  const record: MemberState = { node: m.node, role: m.role, gpuIds: m.gpuIds, done, ok, released };
  if (m.gpuIds.length > 0) return w.created(record);
  return w.shared(`member\u0000${m.node}\u0000${m.role}\u0000${done ? 1 : 0}${ok ? 1 : 0}${released ? 1 : 0}`, record);
}

function releaseAllocation(w: Writer, state: State, event: AllocationReleased): void {
  debit(w, state, event.node, event.resources, event.gpuIds, -1);
  // a gang stopped at its limit is stopped by a session, which tries every pending job with what
  // it freed; only a release from outside a session is news for the next one
  if (event.cause !== 'runtime-limit' && event.cause !== 'preempted') state.freeEpoch = ++state.epoch;
  const n = shardOf(event.jobId);
  const job = entry(state.jobs, n, event.jobId);
  if (job === undefined) return;
  addUsage(w, state, job.spec.identity, event.resources, -1);
  let members: (MemberState | null)[] | undefined;
  for (const m of event.members) {
    const member = (members ?? job.members)[m];
    if (member === undefined || member === null || member.released) continue;
    members ??= w.writable(writableJob(w, state, n, job), 'members');
    members[m] = memberWith(w, member, member.done, member.ok, true);
  }
  const nodeShard = shardOf(event.node);
  const node = entry(state.nodes, nodeShard, event.node);
  const count = node === undefined ? undefined : held(node.jobs, event.jobId);
  const left = (count ?? 0) - event.members.length;
  if (left > 0) w.writableRecord(writableNode(w, state, nodeShard, node!), 'jobs')[event.jobId] = left;
  else if (count !== undefined) delete w.writableRecord(writableNode(w, state, nodeShard, node!), 'jobs')[event.jobId];
}
