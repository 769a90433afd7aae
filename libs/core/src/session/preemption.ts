import type { AllocationResources } from '../events.ts';
import type { Avoid, AllocatorCounters } from '../placement/allocateGang.ts';
import { allocateGang } from '../placement/allocateGang.ts';
import { activeRequest, isElastic } from '../jobRequests.ts';
import type { GangShape } from '../placement/gangShape.ts';
import type { HostClass } from '../placement/hostClass.ts';
import type { HostIndex } from '../placement/hostIndex.ts';
import { shardLeaves } from '../shard.ts';
import type { JobState, State } from '../state.ts';
import { change, heldUses } from './hostUses.ts';
import type { HostUse } from './hostUses.ts';
import { addAllocation } from '../queues/queueUsage.ts';
import { gangRequest } from './queueLedger.ts';
import type { QueueLedger } from './queueLedger.ts';
import { countsDemand, minCounts, surplusMembers } from './elasticGangs.ts';
import type { HeldOnHost, VictimCandidates } from './victimCandidates.ts';

// Whole-gang preemption (DESIGN.md §12). A pending gang that does not fit may stop running gangs:
// reclaim (its request keeps its queue within its guarantee; victims from queues that borrow,
// most over guarantee first, never taking a victim's queue below its guarantee, unless that queue
// turned reclaim off) and, with `withinQueue: "lower-priority"`, gangs of strictly lower priority
// in its own queue. Victims are taken in a fixed order until the preemptor fits (its queues'
// `max` and a placement, as an attempt would find them), then those it does not need are spared,
// last first. Every change to the index and the ledger is taken back unless the caller keeps the
// victims. Gangs committed in this session, or within the policy's minimum runtime, are never victims.
// An elastic gang above its minimum (DESIGN.md §13) is a candidate twice over: each member above
// its roles' minimums, newest first, is a slice taken before any gang is stopped whole; what
// is left (its core) is a candidate among the whole gangs. Slices are never spared (a gang keeps
// a prefix of each role's members), and a core is taken only after all its gang's slices.

/** A running gang as preemption sees it. */
export interface RunningGang {
  job: JobState;
  leaf: string;
  request: AllocationResources;
  uses: HostUse[];
  /** The members this candidate stands for when it is a slice of an elastic gang (its members above minimum); null: the gang, or its core. */
  slice: number[] | null;
}

/** Why a gang was chosen: the reclaim of a guarantee, or a lower priority in the preemptor's queue. */
export type VictimKind = 'reclaim' | 'within-queue';

/** A victim set that lets the preemptor fit, in the order taken. */
export interface Victims {
  gangs: Candidate[];
}

/** The running gangs a session may preempt, by leaf queue (built once, on the first attempt that needs it). */
export class RunningGangs {
  private byLeaf: Map<string, RunningGang[]> | null = null;
  private slicesByLeaf = new Map<string, RunningGang[]>();
  /** Each gang's leaf, so that forgetting a gang reads only its leaf's lists. */
  private readonly leafOfJob = new Map<string, string>();
  /** How many times gangs were forgotten: lists read from this table before are stale once it moves. */
  changes = 0;

  /** `skip`: ids of gangs that are no victims this session (an elastic gang resized in it), read when the table is built. */
  constructor(private readonly state: State, private readonly index: HostIndex, private readonly ledger: QueueLedger, private readonly at: number, private readonly session: number, private readonly skip: ReadonlySet<string>) {}

  /** The gangs of a leaf that may be victims now (elastic gangs' cores among them), in §12's victim order. */
  of(leaf: string): readonly RunningGang[] {
    if (this.byLeaf === null) this.byLeaf = this.build();
    return this.byLeaf.get(leaf) ?? [];
  }

  /** The slices of a leaf's elastic gangs, by their gangs' victim order, each gang's newest first. */
  slicesOf(leaf: string): readonly RunningGang[] {
    if (this.byLeaf === null) this.byLeaf = this.build();
    return this.slicesByLeaf.get(leaf) ?? [];
  }

  /** Every leaf with gangs. */
  leaves(): string[] {
    if (this.byLeaf === null) this.byLeaf = this.build();
    return [...this.byLeaf.keys()].sort();
  }

  /** A gang was stopped, shrunk or grown: neither it nor its slices are victims again this session. */
  forget(jobId: string): void {
    const leaf = this.leafOfJob.get(jobId);
    if (this.byLeaf === null || leaf === undefined) return;
    this.changes++;
    for (const table of [this.byLeaf, this.slicesByLeaf]) {
      const list = table.get(leaf);
      if (list !== undefined && list.some((g) => g.job.spec.id === jobId)) table.set(leaf, list.filter((g) => g.job.spec.id !== jobId));
    }
  }

  private build(): Map<string, RunningGang[]> {
    const min = this.state.policy?.minRuntimeBeforePreemptionMs ?? 0;
    const out = new Map<string, RunningGang[]>();
    const add = (table: Map<string, RunningGang[]>, gang: RunningGang): void => {
      const list = table.get(gang.leaf);
      if (list === undefined) table.set(gang.leaf, [gang]);
      else list.push(gang);
    };
    for (const [, leaf] of shardLeaves(this.state.jobs)) {
      for (const job of leaf) {
        if (job.status !== 'running' || job.session === this.session || this.skip.has(job.spec.id)) continue;
        if (min > 0 && (job.committedAt ?? Number.NEGATIVE_INFINITY) + min > this.at) continue;
        const q = this.ledger.leafOf(job.spec);
        const request = activeRequest(job);
        // a gang winding down (a member finished) gives up no members: it is stopped whole or not at all
        const surplus = isElastic(request) && !job.members.some((m) => m !== null && m.done) ? surplusMembers(job, request) : [];
        const above = new Set(surplus);
        const uses = heldUses(this.index, job, surplus.length === 0 ? null : (m) => !above.has(m));
        if (uses.length === 0) continue;
        this.leafOfJob.set(job.spec.id, q);
        add(out, { job, leaf: q, request: surplus.length === 0 ? gangRequest(request) : countsDemand(request, minCounts(request)), uses, slice: null });
        for (const m of surplus) {
          const role = request.roles.find((r) => r.name === job.members[m]!.role)!;
          add(this.slicesByLeaf, { job, leaf: q, request: { cpu: role.resources.cpu, memoryMb: role.resources.memoryMb, gpus: role.resources.gpus }, uses: heldUses(this.index, job, (k) => k === m), slice: [m] });
        }
      }
    }
    for (const list of out.values()) list.sort(victimOrder);
    // (a stable sort: each gang's slices stay newest first)
    for (const list of this.slicesByLeaf.values()) list.sort(victimOrder);
    return out;
  }
}

/** Victims taken in §12's order within a group: lowest priority, latest start, fewest members, id. */
export function victimOrder(a: RunningGang, b: RunningGang): number {
  return a.job.spec.priority - b.job.spec.priority
    || (b.job.committedAt ?? 0) - (a.job.committedAt ?? 0)
    || a.job.members.length - b.job.members.length
    || (a.job.spec.id < b.job.spec.id ? -1 : a.job.spec.id > b.job.spec.id ? 1 : 0);
}

/** What one preemption attempt needs to know of the preemptor. */
export interface Preemptor {
  job: JobState;
  leaf: string;
  shape: GangShape;
  classes: readonly HostClass[];
  request: AllocationResources;
  avoid: Avoid | null;
}

/** A candidate victim and the rule that makes it one. */
export interface Candidate {
  gang: RunningGang;
  kind: VictimKind;
}

/**
 * The victim set of §12 that lets the preemptor fit, or null (none at all when it would still not
 * fit): the shortest prefix of the candidates after which the preemptor's queues admit it and a
 * placement exists (after one placement with every candidate freed has shown it fits at all:
 * found by doubling, then halving, from the first prefix whose resources could cover the request;
 * placing needs more free, never less), then every victim of that prefix the
 * preemptor does not need spared, last first. On success the victims stay freed on the index and
 * out of the ledger, so the caller places the preemptor and writes the victims' stops; on null
 * everything is as it was.
 */
export function chooseVictims(
  p: Preemptor,
  ledger: QueueLedger,
  index: HostIndex,
  candidates: VictimCandidates,
  counters: AllocatorCounters,
  free: AllocationResources,
): Victims | null {
  const list = candidates.of(p);
  if (list.length === 0 || !anyHostGains(p, index, candidates.heldOn(list))) return null;
  // what is free in the cluster and what a prefix of victims holds must at least add up to the
  // request before a placement is worth trying (a necessary condition, never a sufficient one)
  const sum = { ...free };
  const covers = (): boolean => sum.cpu >= p.request.cpu && sum.memoryMb >= p.request.memoryMb && sum.gpus >= p.request.gpus;
  let from = 0;
  while (!covers() && from < list.length) addAllocation(sum, list[from++]!.gang.request);
  if (!covers()) return null;
  let freed = 0;
  const release = (g: RunningGang, sign: 1 | -1): void => {
    change(index, g.uses, sign);
    ledger.add(g.leaf, g.request, sign === 1 ? -1 : 1);
  };
  // the first `k` candidates freed, exactly (the index's trees set once at the end)
  const freeTo = (k: number): void => {
    const own = index.deferTrees();
    for (; freed < k; freed++) release(list[freed]!.gang, 1);
    for (; freed > k; freed--) release(list[freed - 1]!.gang, -1);
    if (own) index.flushTrees();
  };
  const fitsWith = (k: number): boolean => {
    freeTo(k);
    return fitsNow(p, ledger, index, counters);
  };
  // most attempts that get this far still do not fit with every candidate stopped: one
  // placement with all of them freed says so before any search for the shortest prefix
  if (!fitsWith(list.length)) {
    freeTo(0);
    return null;
  }
  let lo = Math.max(0, from - 1);
  let hi = Math.max(1, from);
  while (hi < list.length && !fitsWith(hi)) {
    lo = hi;
    hi = Math.min(list.length, hi * 2);
  }
  // the shortest prefix that fits lies in (lo, hi]
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fitsWith(mid)) hi = mid;
    else lo = mid;
  }
  freeTo(hi);
  const taken = list.slice(0, hi);
  // spare, last first, every victim the preemptor does not need; never a slice (an elastic gang
  // gives up its newest members; a core spared leaves its gang shrunk)
  for (let i = taken.length - 2; i >= 0; i--) {
    if (taken[i]!.gang.slice !== null) continue;
    release(taken[i]!.gang, -1);
    if (fitsNow(p, ledger, index, counters)) taken.splice(i, 1);
    else release(taken[i]!.gang, 1);
  }
  return { gangs: taken };
}

/** Undoes `chooseVictims`: the victims hold again on the index and in the ledger what they held (their stops are not made after all). */
export function restoreVictims(victims: Victims, index: HostIndex, ledger: QueueLedger): void {
  for (const { gang } of victims.gangs) {
    change(index, gang.uses, -1);
    ledger.add(gang.leaf, gang.request, 1);
  }
}

/**
 * Whether stopping every candidate could let the preemptor in at all: it does not fit now, so at
 * least one host it may use (its classes) must gain enough to take one member of one of its roles
 * (a necessary condition, checked without touching the index: any placement the stops make
 * possible puts a member on a host they freed something on).
 */
function anyHostGains(p: Preemptor, index: HostIndex, heldOn: ReadonlyMap<number, HeldOnHost>): boolean {
  const classes = new Set(p.classes.map((c) => c.index));
  for (const [h, held] of heldOn) {
    if (!classes.has(index.cls[h]!)) continue;
    for (const role of p.shape.roles) {
      const r = role.resources;
      if (index.freeCpu[h]! + held.cpu >= r.cpu && index.freeMem[h]! + held.mem >= r.memoryMb && index.freeSlots[h]! + held.slots >= 1 && index.freeGpu[h]! + held.gpus >= r.gpus) return true;
    }
  }
  return false;
}

// The preemptor's queues admit it and a placement exists, as the index and ledger are now (more
// is free than the session's memo of failures knew: the search neither reads nor feeds it).
function fitsNow(p: Preemptor, ledger: QueueLedger, index: HostIndex, counters: AllocatorCounters): boolean {
  if (ledger.quotaIssue(p.leaf, p.request) !== null) return false;
  const stmt = allocateGang(index, p.job.spec.id, p.shape, p.classes, counters, p.avoid, 'off');
  if (stmt === null) return false;
  stmt.discard();
  return true;
}
