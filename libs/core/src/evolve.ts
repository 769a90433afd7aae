import { produce } from 'immer';
import type { LoggedTransaction, Transaction } from './envelope.ts';
import type {
  AllocationReleased,
  AllocationResources,
  GangAborted,
  GangCommitted,
  HostDebited,
  SchedulerEvent,
} from './events.ts';
import { addResources, zeroResources } from './resources.ts';
import type { Resources } from './resources.ts';
import { shardDelete, shardGet, shardSet } from './shard.ts';
import type { JobState, NodeState, State } from './state.ts';
import { parseSelect } from './select/index.ts';
import { unsatisfiableKey } from './spec/index.ts';
import type { NodeSpec } from './spec/types.ts';

// evolve: the one recipe that folds a fact into state. It mutates what it is given, so the same
// function runs inside immer's `produce` (live transactions) and directly on a private copy (bulk
// replay). It is total: a fact that does not apply (an unknown job, a stale node) changes nothing
// and never throws, because the log is history and history cannot be refused.

/** Categories that mean "every plan was exhausted": those enter the unsatisfiable cache. */
const EXHAUSTED = new Set(['insufficient-resources', 'no-matching-hosts', 'placement-unsatisfiable']);

/** Applies one event to a mutable state (a draft or a private copy). */
export function apply(state: State, event: SchedulerEvent): void {
  switch (event.type) {
    case 'LeaderElected':
      state.term = Math.max(state.term, event.term);
      state.leader = event.leader;
      return;
    case 'NodeRegistered':
      seenInput(state, event.inputSeq);
      registerNode(state, event.node);
      return;
    case 'NodeDrained': {
      seenInput(state, event.inputSeq);
      const node = shardGet(state.nodes, event.nodeId);
      if (node === undefined || node.status !== 'up') return;
      node.status = 'drained';
      addCapacity(state, node.spec, -1);
      return;
    }
    case 'NodeLost': {
      if (event.inputSeq !== undefined) seenInput(state, event.inputSeq);
      const node = shardGet(state.nodes, event.nodeId);
      if (node === undefined || node.status === 'lost') return;
      if (node.status === 'up') addCapacity(state, node.spec, -1);
      node.status = 'lost';
      return;
    }
    case 'JobSubmitted':
      seenInput(state, event.inputSeq);
      submitJob(state, event.job, event.fingerprint);
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
      const member = shardGet(state.jobs, event.jobId)?.members[event.member];
      if (member === undefined || member === null || member.done) return;
      member.done = true;
      member.ok = event.ok;
      return;
    }
    case 'SessionStarted':
      state.session = Math.max(state.session, event.session);
      state.sessionEpoch = state.epoch;
      state.unsatisfiable = {};
      return;
    case 'HostDebited':
      debit(state, event, 1);
      shardGet(state.jobs, event.jobId)?.provisional.push({
        node: event.node,
        role: event.role,
        members: [...event.members],
        resources: { ...event.resources },
        gpuIds: [...event.gpuIds],
      });
      return;
    case 'DebitReversed': {
      debit(state, event, -1);
      const job = shardGet(state.jobs, event.jobId);
      if (job === undefined) return;
      const i = job.provisional.findIndex((d) => d.node === event.node && d.role === event.role);
      if (i >= 0) job.provisional.splice(i, 1);
      return;
    }
    case 'MemberBound': {
      const job = shardGet(state.jobs, event.jobId);
      if (job === undefined || event.member < 0 || event.member >= job.members.length) return;
      job.members[event.member] = {
        node: event.node,
        role: event.role,
        gpuIds: [...event.gpuIds],
        done: false,
        ok: false,
        released: false,
      };
      return;
    }
    case 'GangCommitted':
      commitGang(state, event);
      return;
    case 'GangAborted':
      abortGang(state, event);
      return;
    case 'JobPended': {
      const job = shardGet(state.jobs, event.jobId);
      if (job === undefined) return;
      job.status = 'pending';
      job.pendingSince = event.at;
      job.pendingEpoch = ++state.epoch;
      shardSet(state.pending, event.jobId, job.submitIndex);
      return;
    }
    case 'JobFinished': {
      const job = shardGet(state.jobs, event.jobId);
      if (job === undefined) return;
      job.status = event.outcome;
      job.finishedAt = event.at;
      shardDelete(state.pending, event.jobId);
      return;
    }
    case 'AllocationReleased':
      releaseAllocation(state, event);
      return;
    case 'Checkpoint':
      state.lastCheckpoint = { seq: event.seq, stateHash: event.stateHash };
      return;
    default: {
      // A type the catalogue does not know is a newer writer's fact: it changes nothing here.
      const _exhaustive: never = event;
      return;
    }
  }
}

/** Applies a transaction read from the log: its sequence, stamped time, and every event in order. */
export function applyTransaction(state: State, seq: number, tx: Transaction): void {
  state.seq = seq;
  state.lastAt = Math.max(state.lastAt, tx.at);
  if (tx.term > state.term) state.term = tx.term;
  for (const event of tx.events) apply(state, event);
}

/** One event folded into a new immutable state. */
export function evolve(state: State, event: SchedulerEvent): State {
  return produce(state, (draft) => {
    apply(draft, event);
  });
}

/** A batch of events folded in one `produce`. */
export function fold(state: State, events: readonly SchedulerEvent[]): State {
  return produce(state, (draft) => {
    for (const event of events) apply(draft, event);
  });
}

/** A batch of logged transactions folded in one `produce`. */
export function foldTransactions(state: State, txs: readonly LoggedTransaction[]): State {
  return produce(state, (draft) => {
    for (const { seq, tx } of txs) applyTransaction(draft, seq, tx);
  });
}

function seenInput(state: State, inputSeq: number): void {
  if (inputSeq > state.lastInputSeq) state.lastInputSeq = inputSeq;
}

function nodeCapacity(spec: NodeSpec): Resources {
  return { cpu: spec.capacity.cpu, memoryMb: spec.capacity.memoryMb, slots: spec.capacity.slots ?? 0, gpus: spec.gpus.length };
}

function addCapacity(state: State, spec: NodeSpec, factor: 1 | -1): void {
  addResources(state.capacity, nodeCapacity(spec), factor);
}

function registerNode(state: State, spec: NodeSpec): void {
  const existing = shardGet(state.nodes, spec.id);
  if (existing === undefined) {
    const node: NodeState = { spec, status: 'up', used: zeroResources(), gpusUsed: [], jobs: {} };
    shardSet(state.nodes, spec.id, node);
  } else {
    if (existing.status === 'up') addCapacity(state, existing.spec, -1);
    existing.spec = spec;
    existing.status = 'up';
  }
  addCapacity(state, spec, 1);
  state.freeEpoch = ++state.epoch;
}

function submitJob(state: State, spec: JobState['spec'], fingerprint: string): void {
  if (shardGet(state.jobs, spec.id) !== undefined) return;
  const parsed = spec.select.trim() === '' ? null : parseSelect(spec.select);
  const size = spec.roles.reduce((n, r) => n + r.count, 0);
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
    members: new Array<null>(size).fill(null),
    provisional: [],
    pendReason: null,
    finishedAt: null,
  };
  shardSet(state.jobs, spec.id, job);
  shardSet(state.pending, spec.id, job.submitIndex);
}

function debit(state: State, event: HostDebited | AllocationReleased | { node: string; resources: Resources; gpuIds: number[] }, factor: 1 | -1): void {
  const node = shardGet(state.nodes, event.node);
  if (node === undefined) return;
  addResources(node.used, event.resources, factor);
  if (factor === 1) {
    const set = new Set(node.gpusUsed);
    for (const id of event.gpuIds) set.add(id);
    node.gpusUsed = [...set].sort((a, b) => a - b);
  } else if (event.gpuIds.length > 0) {
    const drop = new Set(event.gpuIds);
    node.gpusUsed = node.gpusUsed.filter((id) => !drop.has(id));
  }
}

function addUsage(state: State, job: JobState, amount: AllocationResources, factor: 1 | -1): void {
  const { user, queue } = job.spec.identity;
  for (const [table, key] of [[state.usage.users, user], [state.usage.queues, queue]] as const) {
    const row = table[key] ?? (table[key] = { cpu: 0, memoryMb: 0, gpus: 0 });
    row.cpu += amount.cpu * factor;
    row.memoryMb += amount.memoryMb * factor;
    row.gpus += amount.gpus * factor;
    if (row.cpu === 0 && row.memoryMb === 0 && row.gpus === 0) delete table[key];
  }
}

function commitGang(state: State, event: GangCommitted): void {
  const job = shardGet(state.jobs, event.jobId);
  if (job === undefined) return;
  job.status = 'running';
  job.session = event.session;
  job.allocations = event.allocations.map((a) => ({ ...a, members: [...a.members], gpuIds: [...a.gpuIds], resources: { ...a.resources } }));
  job.provisional = [];
  job.pendReason = null;
  shardDelete(state.pending, event.jobId);
  for (const a of event.allocations) {
    addUsage(state, job, a.resources, 1);
    const node = shardGet(state.nodes, a.node);
    if (node !== undefined) node.jobs[event.jobId] = (node.jobs[event.jobId] ?? 0) + a.members.length;
  }
}

function abortGang(state: State, event: GangAborted): void {
  const job = shardGet(state.jobs, event.jobId);
  if (job === undefined) return;
  job.pendReason = event.reason;
  if (event.final) {
    job.status = event.reason.category === 'timeout' ? 'timedout' : 'cancelled';
    job.finishedAt = event.at;
    shardDelete(state.pending, event.jobId);
    return;
  }
  if (event.reason.category === 'node-lost') {
    // The releases came first; the gang is forgotten as a unit and JobPended requeues it.
    job.allocations = [];
    job.members = job.members.map(() => null);
    job.session = null;
    return;
  }
  if (event.reason.cached !== true && EXHAUSTED.has(event.reason.category)) {
    state.unsatisfiable[unsatisfiableKey(job.fingerprint, job.spec.identity)] = event.reason.category;
  }
}

function releaseAllocation(state: State, event: AllocationReleased): void {
  debit(state, event, -1);
  state.freeEpoch = ++state.epoch;
  const job = shardGet(state.jobs, event.jobId);
  if (job === undefined) return;
  addUsage(state, job, { cpu: event.resources.cpu, memoryMb: event.resources.memoryMb, gpus: event.resources.gpus }, -1);
  for (const m of event.members) {
    const member = job.members[m];
    if (member !== undefined && member !== null) member.released = true;
  }
  const node = shardGet(state.nodes, event.node);
  if (node !== undefined) {
    const left = (node.jobs[event.jobId] ?? 0) - event.members.length;
    if (left > 0) node.jobs[event.jobId] = left;
    else delete node.jobs[event.jobId];
  }
}
