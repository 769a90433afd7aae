import type { GangShape } from '../placement/gangShape.ts';
import type { HostClass } from '../placement/hostClass.ts';
import type { HostIndex } from '../placement/hostIndex.ts';
import type { HostUse } from './hostUses.ts';
import type { PlannedReservation } from './reservationPlanner.ts';
import type { Running } from './runningTimeline.ts';

/** What a reservation plan reads: the job's shape, hosts and runtime, the running gangs by expected end, the session's earlier reservations and its stamp. */
export interface PlanInputs {
  jobId: string;
  shape: GangShape;
  classes: readonly HostClass[];
  runtime: number;
  running: readonly Running[];
  earlier: readonly PlannedReservation[];
  at: number;
}

/** A host index and a copy of its free room (its trees, keys and sums follow from it). */
export interface FreeRoom {
  index: HostIndex;
  cpu: Float64Array;
  mem: Float64Array;
  slots: Float64Array;
  gpus: Uint8Array;
}

/** A plan made: its inputs (the index's free room as the plan found it), and what it gave. */
interface Kept extends FreeRoom {
  shape: GangShape;
  classes: readonly HostClass[];
  runtime: number;
  running: readonly Running[];
  earlier: readonly { startAt: number; endAt: number; needs: readonly HostUse[] }[];
  /** The stamp, when the plan tried a start now (null: it did not read the stamp beyond the running gangs' ends). */
  at: number | null;
  planned: PlannedReservation | null;
}

/**
 * The reservation plans of the last sessions of a turn context with their inputs (issue 32: a
 * session's cost follows what changed): the blocked job at the head of the queue is planned
 * again in every session, and while nothing its plan reads has changed (the same index with the
 * same free room, the same running gangs with the same expected ends and uses, the same shape,
 * hosts and runtime, the same earlier reservations, and the same stamp when the plan tried a
 * start now) the plan is the same. Kept by the turn context, never in the state; a plan unused
 * for a whole session is forgotten.
 */
export class KeptPlans {
  private current = new Map<string, Kept[]>();
  private previous = new Map<string, Kept[]>();

  /** Starts a session's planning: plans neither made nor used in the last one are forgotten. */
  begin(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  /** The plan kept for exactly these inputs on `index` (a copy the session may spend), or undefined when none is. */
  find(index: HostIndex, inputs: PlanInputs): PlannedReservation | null | undefined {
    for (const map of [this.current, this.previous]) {
      const list = map.get(inputs.jobId);
      const kept = list?.find((k) => sameInputs(k, index, inputs));
      if (kept === undefined) continue;
      if (map === this.previous) this.keep(inputs.jobId, kept);
      return copy(kept.planned);
    }
    return undefined;
  }

  /** The index's free room as a plan about to run on it finds it (for `add`). */
  freeRoom(index: HostIndex): FreeRoom {
    return { index, cpu: index.freeCpu.slice(), mem: index.freeMem.slice(), slots: index.freeSlots.slice(), gpus: index.gpuFree.slice() };
  }

  /** Keeps a plan made from `inputs` on the free room `room`; `fromNow` says whether it tried a start at the stamp. */
  add(room: FreeRoom, inputs: PlanInputs, fromNow: boolean, planned: PlannedReservation | null): void {
    this.keep(inputs.jobId, {
      ...room,
      shape: inputs.shape,
      classes: [...inputs.classes],
      runtime: inputs.runtime,
      running: [...inputs.running],
      earlier: inputs.earlier.map((r) => ({ startAt: r.startAt, endAt: r.endAt, needs: r.needs })),
      at: fromNow ? inputs.at : null,
      planned: copy(planned),
    });
  }

  private keep(jobId: string, kept: Kept): void {
    const list = this.current.get(jobId);
    if (list === undefined) this.current.set(jobId, [kept]);
    else if (!list.includes(kept)) list.push(kept);
  }
}

// Whether a kept plan's inputs are these: a plan reads the index's free room (its trees, keys and
// sums follow from it), the running gangs' ends and uses, the earlier reservations' windows and
// needs, and the stamp only through the ends (clamped to it) and a start now.
function sameInputs(k: Kept, index: HostIndex, p: PlanInputs): boolean {
  if (k.index !== index || k.shape !== p.shape || k.runtime !== p.runtime || (k.at !== null && k.at !== p.at)) return false;
  if (k.classes.length !== p.classes.length || k.classes.some((c, i) => c !== p.classes[i])) return false;
  if (k.earlier.length !== p.earlier.length || k.earlier.some((r, i) => !sameReservation(r, p.earlier[i]!))) return false;
  if (k.running.length !== p.running.length || k.running.some((g, i) => !sameGang(g, p.running[i]!))) return false;
  return equal(k.cpu, index.freeCpu) && equal(k.mem, index.freeMem) && equal(k.slots, index.freeSlots) && equal(k.gpus, index.gpuFree);
}

function sameGang(a: Running, b: Running): boolean {
  return a.end === b.end && a.jobId === b.jobId && (a.uses === b.uses || sameUses(a.uses, b.uses));
}

function sameReservation(a: { startAt: number; endAt: number; needs: readonly HostUse[] }, b: PlannedReservation): boolean {
  return a.startAt === b.startAt && a.endAt === b.endAt && (a.needs === b.needs || sameUses(a.needs, b.needs));
}

function sameUses(a: readonly HostUse[], b: readonly HostUse[]): boolean {
  return a.length === b.length && a.every((u, i) => {
    const v = b[i]!;
    return u.host === v.host && u.cpu === v.cpu && u.mem === v.mem && u.slots === v.slots && u.gpus.length === v.gpus.length && u.gpus.every((g, j) => g === v.gpus[j]);
  });
}

function equal(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// A plan as a session may spend it: its allowances are its own (commits spend them), and its
// hosts (a GangReserved event holds them).
function copy(p: PlannedReservation | null): PlannedReservation | null {
  if (p === null) return null;
  return { ...p, hosts: [...p.hosts], allowance: p.allowance.copy() };
}
