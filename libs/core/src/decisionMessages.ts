import type { Transaction } from './envelope.ts';
import type { Allocation, GangCommitted, GangResized } from './events.ts';
import type { JobState } from './state.ts';
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

/** What `muster.bind.<nodeId>` carries: the members of one committed gang on that node (or those an elastic gang grew by, DESIGN.md §13). */
export interface BindMessage {
  type: 'Bind';
  jobId: string;
  session: number;
  at: number;
  parts: BindPart[];
  /** The job's runtime hint, for simulated members. */
  runtimeMs?: number;
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
 * the members a grown gang added, a Stop per released allocation that was not a completion. `jobOf` looks up the job (for commands and runtime hints).
 */
export function decisionMessages(logSeq: number, tx: Transaction, jobOf: (jobId: string) => JobState | undefined): OutboundMessage[] {
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
      for (const [node, bind] of bindsOf(event, jobOf(event.jobId), memberGpus?.get(event.jobId))) {
        out.push({ subject: subjects.bind(node), payload: bind, msgId: decisionMsgId(logSeq, index, node), logSeq });
      }
    }
  }
  return out;
}

// A commit binds every member; a resize only those bound in its transaction (the members added;
// none when it shrank).
function bindsOf(event: GangCommitted | GangResized, job: JobState | undefined, memberGpus: readonly (number[] | undefined)[] | undefined): [string, BindMessage][] {
  const byNode = new Map<string, BindMessage>();
  const alternative = job?.spec.alternatives === undefined ? undefined : event.type === 'GangCommitted' ? event.alternative : job.alternative;
  for (const whole of event.allocations) {
    const a = event.type === 'GangCommitted' ? whole : addedPart(whole, memberGpus);
    if (a === null) continue;
    let bind = byNode.get(a.node);
    if (bind === undefined) {
      bind = { type: 'Bind', jobId: event.jobId, session: event.session, at: event.at, parts: [] };
      if (job?.spec.runtimeMs !== undefined) bind.runtimeMs = job.spec.runtimeMs;
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
