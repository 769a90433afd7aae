import { runningSizeIssues, shardGet, shardLeaves } from '@muster/core';
import type { SchedulerEvent, State } from '@muster/core';
import type { InvariantRule, Violation } from './auditReport.ts';

/** How many violations a report lists (the count covers all of them). */
const LISTED = 20;

const FINISHED = new Set(['succeeded', 'failed', 'closed', 'cancelled', 'timedout']);

/**
 * The invariants of DESIGN.md §7, checked after every transaction on the nodes and jobs it
 * touched (so the cost follows the log, not the cluster): no overcommit per node and resource, a
 * GPU device serves one member and belongs to its node, no provisional debit left, a running gang
 * has every member bound (an elastic one, DESIGN.md §13, its size within its roles' bounds), no job committed twice, exact release. GPU devices are tracked by an
 * independent ledger of who holds each one, built from the debits and releases themselves.
 * Contract v1.2 (§15): a member's failure releases, in its own transaction, every member of the
 * attempt that still held resources; a commit starts the attempt after the job's last one, and
 * a restart names the attempt after the one it stops; a rendezvous port is held by one running
 * gang at a time on its node (an independent ledger, like the GPUs').
 * It only reads states (which may be frozen).
 */
export class InvariantChecker {
  /** Transactions checked. */
  checked = 0;
  /** Violations found in all. */
  count = 0;
  readonly violations: Violation[] = [];
  private readonly holders = new Map<string, Map<number, string>>();
  // rendezvous ports held, by node then port: the job holding each; and each job's port
  private readonly ports = new Map<string, Map<number, string>>();
  private readonly portOf = new Map<string, { node: string; port: number }>();
  private readonly nodes = new Set<string>();
  private readonly jobs = new Set<string>();
  private seq = 0;
  private reporting = false;

  constructor(private readonly onViolation: (v: Violation) => void = () => undefined) {}

  /**
   * Reads a transaction's events before it is folded into `before`: a GangCommitted for a job that
   * is not pending (or twice in one transaction), and the GPU ledger; remembers what it touches.
   */
  beforeTransaction(seq: number, audited: boolean, before: State, events: readonly SchedulerEvent[]): void {
    this.seq = seq;
    this.reporting = audited;
    this.nodes.clear();
    this.jobs.clear();
    const committed = new Set<string>();
    for (const event of events) {
      switch (event.type) {
        case 'GangCommitted': {
          const job = shardGet(before.jobs, event.jobId);
          if (committed.has(event.jobId)) this.report('committed-twice', `job ${event.jobId} is committed twice in one transaction`);
          else if (job === undefined) this.report('committed-twice', `GangCommitted for unknown job ${event.jobId}`);
          else if (job.status !== 'pending') this.report('committed-twice', `job ${event.jobId} committed while ${job.status}`);
          else if ((event.attempt ?? 0) !== (job.attempt ?? 0)) this.report('attempts', `job ${event.jobId} commits attempt ${event.attempt ?? 0} while it is on attempt ${job.attempt ?? 0}`);
          if (event.rendezvous !== undefined) this.holdPort(event.jobId, event.rendezvous.node, event.rendezvous.port);
          committed.add(event.jobId);
          this.jobs.add(event.jobId);
          for (const a of event.allocations) this.nodes.add(a.node);
          break;
        }
        case 'GangRestarting': {
          const job = shardGet(before.jobs, event.jobId);
          if (job !== undefined && event.attempt !== (job.attempt ?? 0) + 1) this.report('attempts', `job ${event.jobId} restarts as attempt ${event.attempt} after attempt ${job.attempt ?? 0}`);
          this.stopsWhole(before, events, event.jobId);
          this.dropPorts(event.jobId);
          this.jobs.add(event.jobId);
          break;
        }
        case 'HostDebited':
          this.claim(before, event.node, event.jobId, event.gpuIds);
          this.touch(event.node, event.jobId);
          break;
        case 'DebitReversed':
        case 'AllocationReleased':
          this.free(event.node, event.jobId, event.gpuIds, event.type);
          this.touch(event.node, event.jobId);
          break;
        case 'MemberBound':
          this.touch(event.node, event.jobId);
          break;
        case 'TaskCompleted':
          this.touch(event.nodeId, event.jobId);
          break;
        case 'NodeRegistered':
          this.nodes.add(event.node.id);
          break;
        case 'NodeDrained':
        case 'NodeLost':
          this.nodes.add(event.nodeId);
          break;
        case 'JobSubmitted':
          this.jobs.add(event.job.id);
          break;
        case 'JobFinished':
          // failed by its gang's policy (a member named): the attempt is stopped whole
          if (event.member !== undefined) this.stopsWhole(before, events, event.jobId);
          this.dropPorts(event.jobId);
          this.jobs.add(event.jobId);
          break;
        case 'GangAborted':
          if (event.final || event.reason.category === 'node-lost' || event.reason.category === 'preempted') this.dropPorts(event.jobId);
          this.jobs.add(event.jobId);
          break;
        case 'JobPended':
        case 'JobCancelled':
        case 'JobClosed':
          this.jobs.add(event.jobId);
          break;
        default:
          break;
      }
    }
  }

  /**
   * Starts from the holdings `state` records, for an audit of a range that begins at a snapshot:
   * the GPUs of every member not released and the rendezvous port of every gang that holds one.
   */
  seed(state: State): void {
    this.holders.clear();
    this.ports.clear();
    this.portOf.clear();
    for (const [, leaf] of shardLeaves(state.jobs)) {
      for (const job of leaf) {
        const id = job.spec.id;
        for (const m of job.members) {
          if (m === null || m.released || m.gpuIds.length === 0) continue;
          let held = this.holders.get(m.node);
          if (held === undefined) this.holders.set(m.node, (held = new Map()));
          for (const gpu of m.gpuIds) held.set(gpu, id);
        }
        if (job.rendezvous !== undefined) {
          let held = this.ports.get(job.rendezvous.node);
          if (held === undefined) this.ports.set(job.rendezvous.node, (held = new Map()));
          held.set(job.rendezvous.port, id);
          this.portOf.set(id, { node: job.rendezvous.node, port: job.rendezvous.port });
        }
      }
    }
  }

  /** The GPUs and rendezvous ports this checker holds as taken, in one canonical text (to compare a replay's with `seed`'s reading of its state). */
  holdings(): string {
    const text = (table: Map<string, Map<number, string>>): string[] =>
      [...table].flatMap(([node, held]) => [...held].map(([n, job]) => `${node}/${n}=${job}`)).sort();
    return JSON.stringify([text(this.holders), text(this.ports)]);
  }

  /** Adds what the checker of the range after this one found. */
  merge(later: { checked: number; count: number; violations: readonly Violation[] }): void {
    this.checked += later.checked;
    this.count += later.count;
    for (const v of later.violations) if (this.violations.length < LISTED) this.violations.push(v);
  }

  /** Checks every node and job the transaction touched, in the state after it. */
  afterTransaction(after: State): void {
    if (this.reporting) this.checked++;
    for (const id of this.nodes) this.checkNode(after, id);
    for (const id of this.jobs) this.checkJob(after, id);
  }

  /** A failure's transaction releases every member of the job that held resources before it. */
  private stopsWhole(before: State, events: readonly SchedulerEvent[], jobId: string): void {
    const job = shardGet(before.jobs, jobId);
    if (job === undefined) return;
    const released = new Set<number>();
    for (const e of events) if (e.type === 'AllocationReleased' && e.jobId === jobId) for (const m of e.members) released.add(m);
    const left = job.members.flatMap((m, i) => (m !== null && !m.released && !released.has(i) ? [i] : []));
    if (left.length > 0) this.report('gang-failure', `job ${jobId} stops its attempt ${job.attempt ?? 0} after a member failed but leaves member(s) ${left.join(',')} holding resources`);
  }

  private holdPort(jobId: string, node: string, port: number): void {
    let held = this.ports.get(node);
    if (held === undefined) this.ports.set(node, (held = new Map()));
    const holder = held.get(port);
    if (holder !== undefined) this.report('rendezvous', `rendezvous port ${port} on node ${node} is given to job ${jobId} while job ${holder} holds it`);
    held.set(port, jobId);
    this.portOf.set(jobId, { node, port });
  }

  /** A gang stopped (finished, aborted, requeued, restarted) gives its rendezvous port back. */
  private dropPorts(jobId: string): void {
    const held = this.portOf.get(jobId);
    if (held === undefined) return;
    this.portOf.delete(jobId);
    this.ports.get(held.node)?.delete(held.port);
  }

  private touch(node: string, job: string): void {
    this.nodes.add(node);
    this.jobs.add(job);
  }

  private claim(state: State, nodeId: string, jobId: string, gpuIds: readonly number[]): void {
    if (gpuIds.length === 0) return;
    const node = shardGet(state.nodes, nodeId);
    const devices = new Set(node?.spec.gpus.map((g) => g.id) ?? []);
    let held = this.holders.get(nodeId);
    if (held === undefined) this.holders.set(nodeId, (held = new Map()));
    for (const id of gpuIds) {
      if (!devices.has(id)) this.report('gpu-device', `job ${jobId} debits GPU ${id} of node ${nodeId}, which has no such device`);
      const holder = held.get(id);
      if (holder !== undefined) this.report('gpu-device', `GPU ${id} of node ${nodeId} would serve job ${jobId} while it serves ${holder === jobId ? 'another member of the same job' : `job ${holder}`}`);
      held.set(id, jobId);
    }
  }

  private free(nodeId: string, jobId: string, gpuIds: readonly number[], why: string): void {
    const held = this.holders.get(nodeId);
    for (const id of gpuIds) {
      const holder = held?.get(id);
      if (holder !== jobId) this.report('gpu-device', `${why} gives back GPU ${id} of node ${nodeId} for job ${jobId}, but ${holder === undefined ? 'nobody' : `job ${holder}`} holds it`);
      else held?.delete(id);
    }
  }

  private checkNode(state: State, id: string): void {
    const node = shardGet(state.nodes, id);
    if (node === undefined) return;
    const cap = node.spec.capacity;
    const u = node.used;
    const over: string[] = [];
    if (u.cpu > cap.cpu) over.push(`cpu ${u.cpu} > ${cap.cpu}`);
    if (u.memoryMb > cap.memoryMb) over.push(`memoryMb ${u.memoryMb} > ${cap.memoryMb}`);
    if (cap.slots !== undefined && u.slots > cap.slots) over.push(`slots ${u.slots} > ${cap.slots}`);
    if (u.gpus > node.spec.gpus.length) over.push(`gpus ${u.gpus} > ${node.spec.gpus.length}`);
    if (over.length > 0) this.report('overcommit', `node ${id} is overcommitted: ${over.join(', ')}`);
    if (u.cpu < 0 || u.memoryMb < 0 || u.slots < 0 || u.gpus < 0) this.report('exact-release', `node ${id} has negative use ${JSON.stringify(u)}`);
    if (node.gpusUsed.length !== u.gpus) this.report('gpu-device', `node ${id} counts ${u.gpus} GPUs in use but lists devices [${node.gpusUsed.join(',')}]`);
    const devices = new Set(node.spec.gpus.map((g) => g.id));
    const foreign = node.gpusUsed.filter((g) => !devices.has(g));
    if (foreign.length > 0) this.report('gpu-device', `node ${id} uses GPU ids [${foreign.join(',')}] it does not have`);
    let holdsJobs = false;
    for (const _ in node.jobs) {
      holdsJobs = true;
      break;
    }
    if (!holdsJobs && (u.cpu !== 0 || u.memoryMb !== 0 || u.slots !== 0 || u.gpus !== 0 || node.gpusUsed.length > 0)) {
      this.report('exact-release', `node ${id} runs no job but still uses ${JSON.stringify(u)}${node.gpusUsed.length > 0 ? ` and GPUs [${node.gpusUsed.join(',')}]` : ''}`);
    }
  }

  private checkJob(state: State, id: string): void {
    const job = shardGet(state.jobs, id);
    if (job === undefined) return;
    if (job.provisional.length > 0) this.report('provisional-debit', `job ${id} keeps ${job.provisional.length} provisional debit(s) after the transaction`);
    if (job.status === 'running') {
      // every member bound, or an elastic gang's prefix of each role within its minimum and count
      for (const issue of runningSizeIssues(job)) this.report('all-or-nothing', `job ${id} ${issue}`);
    } else if (job.status === 'pending') {
      if (job.members.some((m) => m !== null)) this.report('all-or-nothing', `job ${id} is pending but holds bound members`);
    } else if (FINISHED.has(job.status)) {
      const holding = job.members.flatMap((m, i) => (m !== null && !m.released ? [i] : []));
      if (holding.length > 0) this.report('exact-release', `job ${id} is ${job.status} but member(s) ${holding.join(',')} still hold resources`);
    }
  }

  private report(rule: InvariantRule, message: string): void {
    if (!this.reporting) return;
    this.count++;
    const v: Violation = { seq: this.seq, rule, message };
    if (this.violations.length < LISTED) this.violations.push(v);
    this.onViolation(v);
  }
}
