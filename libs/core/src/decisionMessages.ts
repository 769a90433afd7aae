import type { Transaction } from './envelope.ts';
import type { Allocation, GangCommitted, GangResized, Rendezvous } from './events.ts';
import type { JobState, NodeState } from './state.ts';
import { requestOf } from './jobRequests.ts';
import { decisionMsgId } from './wire/msgIds.ts';
import { subjects } from './wire/subjects.ts';

/** A message the leader publishes on MUSTER_DECISIONS for a logged transaction. */
export interface OutboundMessage {
  subject: string;
  payload: unknown;
  /** `muster:<logSeq>:<index>[:<node>]`, where index is the event's position in the transaction. */
  msgId: string;
  logSeq: number;
}

/** One role's members on a node, as an agent needs them to run. */
export interface BindPart {
  role: string;
  members: number[];
  gpuIds: number[];
  /** The GPU device ids of each member, aligned with `members`. */
  memberGpuIds: number[][];
  resources: Allocation['resources'];
  command?: string[] | string;
  env?: Record<string, string>;
}

/** One member of a gang as every member sees it (DESIGN.md §15). */
export interface GangMemberInfo {
  member: number;
  role: string;
  node: string;
  address: string;
  gpuIds: number[];
}

/** The whole gang, as a member sees it at its start (DESIGN.md §15): what the agent builds the member environment from. */
export interface GangLayout {
  /** 0, then 1, 2, … after restarts (MUSTER_ATTEMPT). */
  attempt: number;
  /** Members bound in the gang at this bind (WORLD_SIZE at start; after an elastic growth, the size after it). */
  size: number;
  rendezvous: Rendezvous;
  /** Every bound member, by member number. */
  members: GangMemberInfo[];
}

/** What `muster.bind.<nodeId>` carries: the members of one committed gang on that node (or those an elastic gang grew by, DESIGN.md §13). */
export interface BindMessage {
  type: 'Bind';
  jobId: string;
  session: number;
  at: number;
  parts: BindPart[];
  /** The job's runtime hint, for simulated members. */
  runtimeMs?: number;
  /** The whole gang (contract v1.2): absent only on logs decided as contract v1.1. */
  gang?: GangLayout;
}

/** What `muster.stop.<nodeId>` carries: members to stop (cancel, close, node loss elsewhere). */
export interface StopMessage {
  type: 'Stop';
  jobId: string;
  members: number[];
  reason: string;
}

/**
 * Every message a logged transaction leads to, in a defined order: each decision (and reservation,
 * and elastic resize) on `muster.decision.<jobId>`, a Bind per node of each committed gang and of
 * the members a grown gang added, a Stop per released allocation that was not a completion.
 * `jobOf` looks up the job (for commands, runtime hints and the gang's layout) and `nodeOf` a
 * node (for its address; without it, or for a node registered without one, the node id is the
 * host name), both in the state after the transaction.
 */
export function decisionMessages(
  logSeq: number,
  tx: Transaction,
  jobOf: (jobId: string) => JobState | undefined,
  nodeOf: (nodeId: string) => NodeState | undefined = () => undefined,
): OutboundMessage[] {
  const out: OutboundMessage[] = [];
  const events = tx.events;
  // MemberBound events of the same transaction say which devices each member got (by job, then member)
  let memberGpus: Map<string, number[][]> | null = null;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.type !== 'MemberBound') continue;
    memberGpus ??= new Map();
    let byMember = memberGpus.get(event.jobId);
    if (byMember === undefined) memberGpus.set(event.jobId, (byMember = []));
    byMember[event.member] = event.gpuIds;
  }
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    if (event.type !== 'GangCommitted' && event.type !== 'GangAborted' && event.type !== 'GangReserved' && event.type !== 'GangResized' && event.type !== 'AllocationReleased') continue;
    if (event.type === 'AllocationReleased') {
      if (event.cause === 'completed') continue;
      const stop: StopMessage = { type: 'Stop', jobId: event.jobId, members: event.members, reason: event.cause };
      out.push({ subject: subjects.stop(event.node), payload: stop, msgId: decisionMsgId(logSeq, index, event.node), logSeq });
      continue;
    }
    // a reservation goes where decisions go, so a publisher watching its job learns its expected start
    out.push({ subject: subjects.decision(event.jobId), payload: event, msgId: decisionMsgId(logSeq, index), logSeq });
    if (event.type === 'GangCommitted' || event.type === 'GangResized') {
      for (const [node, bind] of bindsOf(event, jobOf(event.jobId), memberGpus?.get(event.jobId), nodeOf)) {
        out.push({ subject: subjects.bind(node), payload: bind, msgId: decisionMsgId(logSeq, index, node), logSeq });
      }
    }
  }
  return out;
}

// A commit binds every member; a resize only those bound in its transaction (the members added;
// none when it shrank).
function bindsOf(
  event: GangCommitted | GangResized,
  job: JobState | undefined,
  memberGpus: readonly (number[] | undefined)[] | undefined,
  nodeOf: (nodeId: string) => NodeState | undefined,
): [string, BindMessage][] {
  const byNode = new Map<string, BindMessage>();
  const gang = job === undefined ? undefined : gangLayout(event, job, memberGpus, nodeOf);
  const alternative = job?.spec.alternatives === undefined ? undefined : event.type === 'GangCommitted' ? event.alternative : job.alternative;
  for (const whole of event.allocations) {
    const a = event.type === 'GangCommitted' ? whole : addedPart(whole, memberGpus);
    if (a === null) continue;
    let bind = byNode.get(a.node);
    if (bind === undefined) {
      bind = { type: 'Bind', jobId: event.jobId, session: event.session, at: event.at, parts: [] };
      if (job?.spec.runtimeMs !== undefined) bind.runtimeMs = job.spec.runtimeMs;
      if (gang !== undefined) bind.gang = gang;
      byNode.set(a.node, bind);
    }
    // the committed variant's role (a job with alternatives names it in the commit)
    const role = job === undefined ? undefined : requestOf(job.spec, alternative)?.roles.find((r) => r.name === a.role);
    const memberGpuIds = a.members.map((m) => memberGpus?.[m] ?? []);
    const part: BindPart = { role: a.role, members: a.members, gpuIds: a.gpuIds, memberGpuIds, resources: a.resources };
    if (role?.command !== undefined) part.command = role.command;
    if (role?.env !== undefined) part.env = role.env;
    bind.parts.push(part);
  }
  const binds = [...byNode.entries()];
  // one node (most gangs): nothing to order
  if (binds.length > 1) binds.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return binds;
}

/**
 * The gang as its members see it at this bind (contract v1.2), or undefined on a log decided as
 * v1.1 (no rendezvous): a commit's rendezvous and attempt are in the event, a resize's in the job.
 */
function gangLayout(
  event: GangCommitted | GangResized,
  job: JobState,
  memberGpus: readonly (number[] | undefined)[] | undefined,
  nodeOf: (nodeId: string) => NodeState | undefined,
): GangLayout | undefined {
  const rendezvous = event.type === 'GangCommitted' ? event.rendezvous : job.rendezvous;
  if (rendezvous === undefined) return undefined;
  const members: GangMemberInfo[] = [];
  for (const a of event.allocations) {
    const address = nodeOf(a.node)?.spec.address ?? a.node;
    for (const member of a.members) {
      members.push({ member, role: a.role, node: a.node, address, gpuIds: memberGpus?.[member] ?? job.members[member]?.gpuIds ?? [] });
    }
  }
  members.sort((x, y) => x.member - y.member);
  const attempt = (event.type === 'GangCommitted' ? event.attempt : job.attempt) ?? 0;
  return { attempt, size: members.length, rendezvous, members };
}

// The part of a resized gang's allocation bound in this transaction, or null.
function addedPart(a: Allocation, memberGpus: readonly (number[] | undefined)[] | undefined): Allocation | null {
  const members = a.members.filter((m) => memberGpus?.[m] !== undefined);
  if (members.length === 0) return null;
  // an allocation's resources are its members' (identical) demands summed
  const per = (total: number): number => (total / a.members.length) * members.length;
  return {
    node: a.node,
    role: a.role,
    members,
    gpuIds: members.flatMap((m) => memberGpus![m]!),
    resources: { cpu: per(a.resources.cpu), memoryMb: per(a.resources.memoryMb), gpus: per(a.resources.gpus) },
  };
}
