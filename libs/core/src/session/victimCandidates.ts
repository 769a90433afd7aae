import type { AllocationResources } from '../events.ts';
import { addAllocation } from '../queues/queueUsage.ts';
import { victimOrder } from './preemption.ts';
import type { Candidate, Preemptor, RunningGang, RunningGangs } from './preemption.ts';
import type { QueueLedger } from './queueLedger.ts';

/** What the candidates of one list hold on one host, summed. */
export interface HeldOnHost {
  cpu: number;
  mem: number;
  slots: number;
  gpus: number;
}

const NONE: readonly Candidate[] = Object.freeze([]);

/**
 * The candidate victims of a session's preemptions (DESIGN.md §12), kept while what runs is the
 * same: each leaf's reclaim sequence until a preemption (`clear`), each kind of preemptor's list
 * (its leaf, whether its request keeps it within guarantee, its priority) until a gang is
 * forgotten too, and per list what its candidates hold on each host. Preemptors of one leaf ask
 * for the same lists thousands of times a session; building them is what preemption cost most.
 */
export class VictimCandidates {
  private readonly sequences = new Map<string, Candidate[]>();
  private readonly lists = new Map<string, readonly Candidate[]>();
  /** `RunningGangs.changes` when `lists` were made. */
  private listsAt = 0;
  private readonly held = new WeakMap<readonly Candidate[], Map<number, HeldOnHost>>();

  constructor(private readonly ledger: QueueLedger, private readonly running: RunningGangs) {}

  /** Every candidate a preemptor may stop, in the order taken: reclaim victims before within-queue ones. */
  of(p: Preemptor): readonly Candidate[] {
    const within = this.ledger.withinGuarantee(p.leaf, p.request);
    if (this.ledger.queues[p.leaf]?.preemption.withinQueue !== 'lower-priority') return within ? this.reclaim(p.leaf) : NONE;
    if (this.listsAt !== this.running.changes) {
      this.lists.clear();
      this.listsAt = this.running.changes;
    }
    const key = `${p.leaf}\u0000${within ? 1 : 0}\u0000${p.job.spec.priority}`;
    let list = this.lists.get(key);
    if (list === undefined) {
      list = this.build(p.leaf, within ? this.reclaim(p.leaf) : NONE, p.job.spec.priority);
      this.lists.set(key, list);
    }
    return list;
  }

  /** What a list's candidates hold, per host (made once per list). */
  heldOn(list: readonly Candidate[]): Map<number, HeldOnHost> {
    let held = this.held.get(list);
    if (held === undefined) {
      held = new Map();
      for (const c of list) {
        for (const u of c.gang.uses) {
          const h = held.get(u.host);
          if (h === undefined) held.set(u.host, { cpu: u.cpu, mem: u.mem, slots: u.slots, gpus: u.gpus.length });
          else {
            h.cpu += u.cpu;
            h.mem += u.mem;
            h.slots += u.slots;
            h.gpus += u.gpus.length;
          }
        }
      }
      this.held.set(list, held);
    }
    return held;
  }

  /** What runs changed (a preemption): every list is made again when next asked for. */
  clear(): void {
    this.sequences.clear();
    this.lists.clear();
  }

  // The reclaim victims, then the leaf's gangs of a priority below the preemptor's (every slice
  // before any gang is stopped whole, DESIGN.md §13).
  private build(leaf: string, reclaimed: readonly Candidate[], priority: number): readonly Candidate[] {
    // the leaf's gangs are in victim order, lowest priority first: the lower ones are a prefix
    const lower = (list: readonly RunningGang[]): Candidate[] => {
      const out: Candidate[] = [];
      for (const gang of list) {
        if (gang.job.spec.priority >= priority) break;
        out.push({ gang, kind: 'within-queue' });
      }
      return out;
    };
    const gangs = lower(this.running.of(leaf));
    const slices = lower(this.running.slicesOf(leaf));
    if (slices.length === 0) return gangs.length === 0 ? reclaimed : [...reclaimed, ...gangs];
    const firstWhole = reclaimed.findIndex((c) => c.gang.slice === null);
    const cut = firstWhole < 0 ? reclaimed.length : firstWhole;
    return [...reclaimed.slice(0, cut), ...slices, ...reclaimed.slice(cut), ...gangs];
  }

  /**
   * The reclaim victims open to a preemptor in `leaf`, in the order they are taken: queues most
   * over guarantee first, then §12's order; a gang whose stop (after those before it) would take
   * a queue of its side of the tree below its guarantee is passed over. Kept per leaf until `clear`.
   */
  private reclaim(leaf: string): Candidate[] {
    let seq = this.sequences.get(leaf);
    if (seq === undefined) {
      seq = this.sequence(leaf);
      this.sequences.set(leaf, seq);
    }
    return seq;
  }

  private sequence(leaf: string): Candidate[] {
    const ledger = this.ledger;
    const mine = new Set(ledger.path(leaf));
    // the leaves that lend victims, each with its side of the tree (its queues that are not the
    // preemptor's) and how far that side is over guarantee; its own queue must borrow (a parent
    // that borrows through a sibling lends no victims from a queue that does not)
    const lenders: Lender[] = [];
    for (const other of this.running.leaves()) {
      if (other === leaf || ledger.queues[other]?.preemption.reclaim === false) continue;
      const side = ledger.path(other).filter((q) => !mine.has(q));
      if (side.length === 0 || !ledger.borrowing(other)) continue;
      lenders.push({ leaf: other, side, over: Math.max(...side.map((q) => ledger.over(q))) });
    }
    // (a stable sort: leaves as far over stay in name order)
    lenders.sort((a, b) => b.over - a.over);
    const sides = new Map(lenders.map((l) => [l.leaf, l.side]));
    // reclaim never takes a victim's queue below its guarantee, counting the victims before it;
    // slices come first, and a core only after every slice of its gang
    const taken = new Map<string, AllocationResources>();
    const passed = new Set<string>();
    const out: Candidate[] = [];
    const take = (gang: RunningGang): void => {
      const side = sides.get(gang.leaf)!;
      if (passed.has(gang.job.spec.id) || side.some((q) => ledger.wouldFallBelow(q, gang.request, taken.get(q)))) {
        passed.add(gang.job.spec.id);
        return;
      }
      for (const q of side) {
        const sum = taken.get(q);
        if (sum === undefined) taken.set(q, { ...gang.request });
        else addAllocation(sum, gang.request);
      }
      out.push({ gang, kind: 'reclaim' });
    };
    for (const gang of byOver(lenders, (l) => this.running.slicesOf(l))) take(gang);
    // a gang whose stop alone would take a queue below its guarantee is passed wherever it comes
    // (the victims before it only add to what is taken), and after a core nothing of its gang
    // comes: such cores are left out before the leaves' lists are merged
    const alone = (gang: RunningGang): boolean => !sides.get(gang.leaf)!.some((q) => ledger.wouldFallBelow(q, gang.request));
    for (const gang of byOver(lenders, (l) => this.running.of(l).filter(alone))) take(gang);
    return out;
  }
}

/** A leaf whose gangs reclaim may take, with its side of the tree and how far that is over guarantee. */
interface Lender {
  leaf: string;
  side: string[];
  over: number;
}

/**
 * The lenders' gangs (each leaf's list in §12's victim order) most over guarantee first, then in
 * victim order: the lists of leaves as far over merged, ties to the leaf first in name order,
 * which is the order a stable sort of every gang by (over, victim order) gives.
 */
function* byOver(lenders: readonly Lender[], gangsOf: (leaf: string) => readonly RunningGang[]): Generator<RunningGang> {
  for (let i = 0; i < lenders.length;) {
    let j = i + 1;
    while (j < lenders.length && lenders[j]!.over === lenders[i]!.over) j++;
    if (j === i + 1) yield* gangsOf(lenders[i]!.leaf);
    else yield* merged(lenders.slice(i, j).map((l) => gangsOf(l.leaf)));
    i = j;
  }
}

/** Lists each in victim order, merged into one (ties to the earlier list). */
function* merged(lists: readonly (readonly RunningGang[])[]): Generator<RunningGang> {
  const next = lists.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (next[i]! < lists[i]!.length && (best < 0 || victimOrder(lists[i]![next[i]!]!, lists[best]![next[best]!]!) < 0)) best = i;
    }
    if (best < 0) return;
    yield lists[best]![next[best]!++]!;
  }
}
