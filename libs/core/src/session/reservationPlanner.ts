import type { Policy } from '../contract/types.ts';
import { allocateGang } from '../placement/allocateGang.ts';
import type { Avoid } from '../placement/allocateGang.ts';
import type { GangShape } from '../placement/gangShape.ts';
import type { HostClass } from '../placement/hostClass.ts';
import type { HostIndex } from '../placement/hostIndex.ts';
import type { LiveDebit } from '../placement/statement.ts';
import { shardGet, shardLeaves } from '../shard.ts';
import type { JobState, State } from '../state.ts';
import { Allowances } from './allowances.ts';
import { expectedEnd } from './runtimeLimits.ts';
import { change, heldUses } from './hostUses.ts';
import type { HostUse } from './hostUses.ts';
import type { KeptPlans, PlanInputs } from './keptPlans.ts';
import { byEnd } from './runningTimeline.ts';
import type { Running, RunningTimeline } from './runningTimeline.ts';
import type { SessionStats } from './sessionStats.ts';

// Reservations and backfill (DESIGN.md §11), planned on the session's own host index:
//
// - A plan for a later time `t` credits the index with what every running gang expected to end
//   by `t` holds, holds what every earlier reservation of this session needs if its window meets
//   the job's window [t, t + runtime), runs the same allocator (same plans, same host order), and
//   then takes every change back exactly. Candidate times are the expected ends of running gangs
//   and of earlier reservations, in order, from the first at which the free totals of the hosts
//   the job may use could hold it. A reservation's holds are applied for its whole window even
//   when it starts inside the job's: a little conservative, never an overbooking.
// - Backfill: a job is placed now only if it delays no reservation made earlier in the session.
//   A reservation starting before the job is expected to end (now + its runtime) allows it, on
//   each of the reservation's hosts, only what the reservation's plan left free there at its
//   start (its allowance), and never the devices the plan took. The placement the job would get
//   without reservations stands when it keeps to that (`violates`); otherwise the search runs
//   again passing over the hosts where a bucket would not (`avoid`); each commit spends the
//   allowances of the reservations it runs past.

/** A reservation made in this session. */
export interface PlannedReservation {
  jobId: string;
  startAt: number;
  /** When its planned runtime ends (Infinity: never, for planning). */
  endAt: number;
  /** Node ids of the hosts its plan takes, sorted. */
  hosts: string[];
  /** What its plan takes on each host. */
  needs: HostUse[];
  /** What its plan leaves free at its start, by host: what jobs running past its start may still take there. */
  allowance: Allowances;
}

/** Plans reservations for a session and keeps backfill from delaying them; every change a plan makes to the index is taken back. */
export class ReservationPlanner {
  /** Reservations made so far in this session, in the session's order. */
  readonly reservations: PlannedReservation[] = [];

  private running: Running[] | null = null;
  private committedSince: Running[] = [];
  // the reservations by the hosts their plans take
  private readonly byHost = new Map<number, PlannedReservation[]>();

  constructor(
    private readonly index: HostIndex,
    private readonly state: State,
    private readonly policy: Policy,
    private readonly at: number,
    private readonly counters: SessionStats,
    // the turn context's timeline and plans, and the session's input state (null: every running gang read again, every plan made anew)
    private readonly kept: { timeline: RunningTimeline; plans: KeptPlans; base: State } | null = null,
  ) {
    kept?.plans.begin();
  }

  /** Whether a job is reserved in this session's plan. */
  reserves(jobId: string): boolean {
    return this.reservations.some((r) => r.jobId === jobId);
  }

  /** How many reservations the session may still make. */
  get room(): number {
    return this.policy.reserveDepth - this.reservations.length;
  }

  /**
   * The earliest start of a job that does not fit now, with the hosts its plan takes, or null when
   * no finite start exists (it waits on gangs that never end, or on reservations that never do).
   */
  plan(jobId: string, shape: GangShape, classes: readonly HostClass[], runtime: number): PlannedReservation | null {
    const running = this.runningGangs();
    const plans = this.kept?.plans ?? null;
    if (plans === null) return this.planAnew(jobId, shape, classes, runtime, running).planned;
    const inputs: PlanInputs = { jobId, shape, classes, runtime, running, earlier: this.reservations, at: this.at };
    const found = plans.find(this.index, inputs);
    if (found !== undefined) {
      this.counters.plansKept++;
      return found;
    }
    const room = plans.freeRoom(this.index);
    const { planned, fromNow } = this.planAnew(jobId, shape, classes, runtime, running);
    plans.add(room, inputs, fromNow, planned);
    return planned;
  }

  // The plan as `plan` describes it, and whether it tried a start now (the stamp then matters).
  private planAnew(jobId: string, shape: GangShape, classes: readonly HostClass[], runtime: number, running: readonly Running[]): { planned: PlannedReservation | null; fromNow: boolean } {
    const index = this.index;
    const credited: HostUse[] = [];
    try {
      const times = this.candidateTimes(running, shape, classes);
      const fromNow = times[0] === this.at;
      let next = 0;
      for (const t of times) {
        const ended: HostUse[] = [];
        for (; next < running.length && running[next]!.end <= t; next++) ended.push(...running[next]!.uses);
        change(index, ended, 1);
        credited.push(...ended);
        const holds = this.holdsOver(t, t + runtime);
        change(index, holds, -1);
        // a plan for a later time, when more is free than now: the memo of failures says nothing of it
        const stmt = allocateGang(index, jobId, shape, classes, this.counters, null, 'off');
        let planned: PlannedReservation | null = null;
        if (stmt !== null) {
          planned = this.reservationOf(jobId, t, t + runtime, stmt.held);
          stmt.discard();
        }
        change(index, holds, 1);
        if (planned !== null) return { planned, fromNow };
      }
      return { planned: null, fromNow };
    } finally {
      change(index, credited, -1);
    }
  }

  /** Records a reservation of this session: later jobs are placed only where they do not delay it. */
  add(reservation: PlannedReservation): void {
    this.reservations.push(reservation);
    for (const need of reservation.needs) {
      const list = this.byHost.get(need.host);
      if (list === undefined) this.byHost.set(need.host, [reservation]);
      else list.push(reservation);
    }
  }

  /**
   * The hosts a job expected to end at `end` must pass over for a bucket, or null when no
   * reservation starts before then: a host of a reservation starting earlier where the bucket
   * would take more than the reservation's plan leaves there at its start, or would need one of
   * the devices the plan takes.
   */
  avoid(end: number): Avoid | null {
    if (!this.reservations.some((r) => r.startAt < end)) return null;
    const index = this.index;
    return (h, demand) => {
      const mine = this.byHost.get(h);
      if (mine === undefined) return false;
      let reservedFree = 0;
      for (const r of mine) {
        if (r.startAt >= end) continue;
        if (r.allowance.exceeded(h, demand.cpu, demand.memoryMb, demand.slots)) return true;
        if (demand.gpus === 0) continue;
        for (const need of r.needs) if (need.host === h) for (const g of need.gpus) if (index.gpuFree[index.gpuBase[h]! + g] === 1) reservedFree++;
      }
      return demand.gpus > 0 && index.freeGpu[h]! - reservedFree < demand.gpus;
    };
  }

  /**
   * Whether a placement (a statement's debits) of a job expected to end at `end` would delay a
   * reservation starting before then: on one of its hosts it takes more than the reservation's
   * plan leaves there at its start, or a device the plan takes.
   */
  violates(end: number, debits: readonly LiveDebit[]): boolean {
    if (this.reservations.length === 0) return false;
    for (const [h, use] of usesByHost(this.index, debits)) {
      for (const r of this.byHost.get(h) ?? []) {
        if (r.startAt >= end) continue;
        if (r.allowance.exceeded(h, use.cpu, use.mem, use.slots)) return true;
        const need = r.needs.find((n) => n.host === h)!;
        if (use.gpus.some((g) => need.gpus.includes(g))) return true;
      }
    }
    return false;
  }

  /** A gang committed this session, expected to end at `end`: it runs in later plans, and spends the allowances of the reservations it runs past. */
  committed(jobId: string, debits: readonly LiveDebit[], end: number): void {
    const uses = debits.map((d) => useOf(this.index, d));
    // merged into the timeline when the next plan needs it (one sort, not an insertion per commit)
    if (this.running !== null) this.committedSince.push({ end, jobId, uses });
    for (const r of this.reservations) {
      if (r.startAt >= end) continue;
      for (const use of uses) r.allowance.spend(use.host, use.cpu, use.mem, use.slots);
    }
  }

  /** A running gang was stopped by preemption in this session: what it held is free now, not at its expected end. */
  preempted(jobId: string): void {
    if (this.running !== null) this.running = this.running.filter((g) => g.jobId !== jobId);
  }

  /** The reservation a placement on `hosts` of a job ending at `end` would delay: the first it meets, else the first it runs past. */
  delayed(end: number, hosts: readonly number[]): PlannedReservation | null {
    const relevant = this.reservations.filter((r) => r.startAt < end);
    return relevant.find((r) => r.needs.some((n) => hosts.includes(n.host))) ?? relevant[0] ?? null;
  }

  // The expected ends at which a plan is worth trying, in order: from the first at which the free
  // totals of the job's hosts could hold it (nothing fits before), every end of a running gang or
  // of an earlier reservation.
  private candidateTimes(running: readonly Running[], shape: GangShape, classes: readonly HostClass[]): number[] {
    const index = this.index;
    // a host is in one class: the job's hosts are its classes' (a class listed twice counted once)
    const eligible = new Set(classes);
    const need = { cpu: 0, mem: 0, slots: shape.size, gpus: 0 };
    for (const role of shape.roles) {
      need.cpu += role.resources.cpu * role.count;
      need.mem += role.resources.memoryMb * role.count;
      need.gpus += role.resources.gpus * role.count;
    }
    const free = { cpu: 0, mem: 0, slots: 0, gpus: 0 };
    for (const c of eligible) {
      for (const h of c.hosts) {
        free.cpu += index.freeCpu[h]!;
        free.mem += index.freeMem[h]!;
        free.slots += index.freeSlots[h]!;
        free.gpus += index.freeGpu[h]!;
      }
    }
    const enough = (): boolean => free.cpu >= need.cpu && free.mem >= need.mem && free.slots >= need.slots && free.gpus >= need.gpus;
    let from = this.at;
    for (const g of running) {
      // a gang that never ends (kept warm without a limit) frees nothing to plan on
      if (enough() || !Number.isFinite(g.end)) break;
      from = g.end;
      for (const use of g.uses) {
        if (!eligible.has(index.classes[index.cls[use.host]!]!)) continue;
        free.cpu += use.cpu;
        free.mem += use.mem;
        free.slots += use.slots;
        free.gpus += use.gpus.length;
      }
    }
    if (!enough()) return [];
    const times = new Set<number>([from]);
    for (const g of running) if (g.end > from && Number.isFinite(g.end)) times.add(g.end);
    for (const r of this.reservations) if (r.endAt > from && Number.isFinite(r.endAt)) times.add(r.endAt);
    return [...times].sort((a, b) => a - b);
  }

  /** What every reservation whose window meets [from, to) needs, to hold during a plan (devices only where free now). */
  private holdsOver(from: number, to: number): HostUse[] {
    const index = this.index;
    const holds: HostUse[] = [];
    for (const r of this.reservations) {
      if (r.startAt >= to || r.endAt <= from) continue;
      for (const need of r.needs) holds.push({ ...need, gpus: need.gpus.filter((g) => index.gpuFree[index.gpuBase[need.host]! + g] === 1) });
    }
    return holds;
  }

  private reservationOf(jobId: string, startAt: number, endAt: number, debits: readonly LiveDebit[]): PlannedReservation {
    const index = this.index;
    const needs = [...usesByHost(index, debits).values()].sort((a, b) => a.host - b.host);
    // the statement still holds its debits: what is free on each host now is what it leaves at its start
    const allowance = Allowances.of(needs.map((n) => n.host), (h) => [index.freeCpu[h]!, index.freeMem[h]!, index.freeSlots[h]!]);
    const hosts = needs.map((n) => index.ids[n.host]!).sort();
    return { jobId, startAt, endAt, hosts, needs, allowance };
  }

  /** Every running gang of the state on an up host, by expected end (ties by job id). */
  private runningGangs(): Running[] {
    if (this.running !== null) {
      if (this.committedSince.length > 0) {
        this.running = [...this.running, ...this.committedSince].sort(byEnd);
        this.committedSince = [];
      }
      return this.running;
    }
    const index = this.index;
    if (this.kept !== null) {
      this.running = this.kept.timeline.timeline(index, this.policy, this.at, this.kept.base.jobs, this.state.jobs);
      return this.running;
    }
    const out: Running[] = [];
    for (const job of runningOnIndex(index, this.state)) {
      const uses = heldUses(index, job);
      if (uses.length > 0) out.push({ end: expectedEnd(job, this.policy, this.at), jobId: job.spec.id, uses });
    }
    out.sort(byEnd);
    this.running = out;
    return out;
  }
}

/**
 * The running jobs that may hold something on the index, in no particular order: a gang holds
 * something there only through members bound on its hosts, so the jobs those hosts' nodes list
 * (with `index.prune` off: every job the state keeps, as before).
 */
function* runningOnIndex(index: HostIndex, state: State): Generator<JobState> {
  if (!index.prune) {
    for (const [, leaf] of shardLeaves(state.jobs)) for (const job of leaf) if (job.status === 'running') yield job;
    return;
  }
  const ids = new Set<string>();
  for (const id of index.ids) {
    const node = shardGet(state.nodes, id);
    if (node !== undefined) for (const jobId in node.jobs) ids.add(jobId);
  }
  for (const jobId of ids) {
    const job = shardGet(state.jobs, jobId);
    if (job !== undefined && job.status === 'running') yield job;
  }
}

/** What a debit of the statement takes, as a host use. */
function useOf(index: HostIndex, d: LiveDebit): HostUse {
  const r = d.event.resources;
  return { host: d.host, cpu: r.cpu, mem: r.memoryMb, slots: r.slots, gpus: [...d.undo.gpuIndices] };
}

/** What a statement's debits take, summed per host. */
function usesByHost(index: HostIndex, debits: readonly LiveDebit[]): Map<number, HostUse> {
  const byHost = new Map<number, HostUse>();
  for (const d of debits) {
    const use = useOf(index, d);
    const known = byHost.get(use.host);
    if (known === undefined) byHost.set(use.host, use);
    else {
      known.cpu += use.cpu;
      known.mem += use.mem;
      known.slots += use.slots;
      known.gpus.push(...use.gpus);
    }
  }
  return byHost;
}

