// The subjects of the public contract v1 (DESIGN.md §2), spelled once: the core builds and parses
// them (ingest, decision messages, the simulator), the bus re-exports them to every service.

/** The kinds of input an agent sends about its own node (`muster.in.node.<nodeId>.<kind>`). */
export type NodeInputKind = 'register' | 'drain' | 'lost' | 'done';

const NODE_INPUT = /^muster\.in\.node\.([^.]+)\.(register|drain|lost|done)$/;
const QUEUE_SET = /^muster\.in\.queue\.([^.]+)\.set$/;

/** Every subject muster uses, as constants and functions of the ids they carry. */
export const subjects = {
  /** The prefix of every input subject: only `muster.in.…` reaches MUSTER_IN. */
  inputPrefix: 'muster.in.',
  /** Every input subject (MUSTER_IN's subjects). */
  inputs: 'muster.in.>',
  /** A JobSpec to submit. */
  submit: 'muster.in.submit',
  /** `{jobId}`: cancel a job. */
  cancel: 'muster.in.cancel',
  /** `{jobId}`: release a kept-warm job. */
  close: 'muster.in.close',
  /** A PolicySpec: an operator sets the scheduling policy (contract v1.1). */
  policy: 'muster.in.policy',
  /** A QueueSpec: an operator creates or replaces the queue `<name>` (contract v1.1, DESIGN.md §12). */
  queueSet: (name: string): string => `muster.in.queue.${name}.set`,
  /** An input about one node, on a subject that carries its id (so permissions can confine an agent to it). */
  nodeInput: (nodeId: string, kind: NodeInputKind): string => `muster.in.node.${nodeId}.${kind}`,
  /** The subject every log transaction is appended on. */
  log: 'muster.log.tx',
  /** The decisions about one job. */
  decision: (jobId: string): string => `muster.decision.${jobId}`,
  /** The decisions about every job. */
  allDecisions: 'muster.decision.*',
  /** What every decision subject starts with. */
  decisionPrefix: 'muster.decision.',
  /** The binds of one node. */
  bind: (nodeId: string): string => `muster.bind.${nodeId}`,
  /** The binds of every node. */
  allBinds: 'muster.bind.*',
  /** What every bind subject starts with. */
  bindPrefix: 'muster.bind.',
  /** The stops of one node. */
  stop: (nodeId: string): string => `muster.stop.${nodeId}`,
  /** What every output subject starts with (MUSTER_OUTPUT's subjects). */
  outputPrefix: 'muster.out.',
  /** One member's output lines (DESIGN.md §15): the node first, so permissions confine an agent to its own node's output. */
  output: (nodeId: string, jobId: string, member: number): string => `muster.out.${nodeId}.${jobId}.${member}`,
  /** One node's output, every job (what an agent may publish on). */
  nodeOutput: (nodeId: string): string => `muster.out.${nodeId}.>`,
  /** Every member's output of one job, on every node. */
  jobOutput: (jobId: string): string => `muster.out.*.${jobId}.*`,
  /** One member's output of one job, on whichever node it ran. */
  memberOutput: (jobId: string, member: number): string => `muster.out.*.${jobId}.${member}`,
  /** One node's heartbeat on core NATS. */
  heartbeat: (nodeId: string): string => `muster.hb.${nodeId}`,
  /** Every node's heartbeat. */
  allHeartbeats: 'muster.hb.*',
  /** The request/reply API: validate and forward a submission. */
  apiSubmit: 'muster.api.submit',
  /** The request/reply API: one job. */
  apiJobGet: 'muster.api.job.get',
  /** The request/reply API: the jobs, optionally of one status. */
  apiJobsList: 'muster.api.jobs.list',
  /** The request/reply API: the nodes. */
  apiNodesList: 'muster.api.nodes.list',
  /** The request/reply API: the queues with their use, guarantee and max (DESIGN.md §12). */
  apiQueuesList: 'muster.api.queues.list',
  /** The request/reply API: why a job is where it is. */
  apiExplain: 'muster.api.explain',
  /** Every API subject (what a replica serves). */
  api: 'muster.api.>',
  /** One replica's role and progress. */
  replicaStatus: (replicaId: string): string => `muster.replica.${replicaId}.status`,
  /** Every replica's role and progress (each replica answers). */
  allReplicasStatus: 'muster.replica.status',
} as const;

/** The id that ends an entity's subject (`muster.decision.<jobId>`, `muster.hb.<nodeId>`, `muster.bind.<nodeId>`, …); ids have no dots. */
export function idOf(subject: string): string {
  return subject.slice(subject.lastIndexOf('.') + 1);
}

/** The node id and kind of a node input subject (`muster.in.node.<nodeId>.<kind>`), or null for any other subject. */
export function nodeInputOf(subject: string): { nodeId: string; kind: NodeInputKind } | null {
  const match = NODE_INPUT.exec(subject);
  return match === null ? null : { nodeId: match[1]!, kind: match[2] as NodeInputKind };
}

/** The queue name of a queue-set subject (`muster.in.queue.<name>.set`), or null for any other subject. */
export function queueSetOf(subject: string): string | null {
  return QUEUE_SET.exec(subject)?.[1] ?? null;
}
