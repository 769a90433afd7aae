import type { Policy } from '../contract/types.ts';
import type { HostIndex } from '../placement/hostIndex.ts';
import type { Sharded } from '../shard.ts';
import { diffShards } from '../shardDiff.ts';
import type { JobState } from '../state.ts';
import { heldUses } from './hostUses.ts';
import type { HostUse } from './hostUses.ts';
import { plannedRuntime } from './runtimeLimits.ts';

/** A running gang (or one committed this session) as planning sees it: when it ends, what it holds. */
export interface Running {
  end: number;
  jobId: string;
  uses: HostUse[];
}

/** A running gang with something on the index, as read from its job record. */
interface Gang {
  /** Its commit plus its planned runtime (null: no commit time, so its end depends on the session's time). */
  due: number | null;
  runtime: number;
  jobId: string;
  uses: HostUse[];
}

type Jobs = Sharded<JobState>;

/** Gangs read from a jobs table, and whether every part read was frozen (may be kept for a later state). */
interface Read {
  gangs: Gang[];
  frozen: boolean;
}

/**
 * The running gangs of the sessions of one turn context with something on their host index, kept
 * by their commit plus planned runtime across sessions (issue 32: a session's cost follows what
 * changed): states share what did not change, so a later session re-reads only the parts of the
 * jobs table that are not the very objects read before, and patches the timeline from their
 * gangs. Valid for one host index (its host numbers) and one assumed runtime; kept by the turn
 * context, never in the state.
 */
export class RunningTimeline {
  private index: HostIndex | null = null;
  private assumed = 0;
  // the frozen jobs table last read, and its gangs by `due` (ties by job id)
  private root: Jobs | null = null;
  private gangs: Gang[] = [];
  // the gangs of each frozen leaf read on this index
  private leaves = new WeakMap<object, Gang[]>();

  /**
   * The running gangs of `jobs` with something on `index`, by expected end at `at` (ties by job
   * id, as `expectedEnd` and a sort would give them): those of `base` (the session's input table,
   * kept for the next session when frozen), patched with what `jobs` (the session's own copy,
   * which may have changed since) changed.
   */
  timeline(index: HostIndex, policy: Policy, at: number, base: Jobs, jobs: Jobs): Running[] {
    if (this.index !== index || this.assumed !== policy.assumedRuntimeMs) {
      this.index = index;
      this.assumed = policy.assumedRuntimeMs;
      this.root = null;
      this.gangs = [];
      this.leaves = new WeakMap();
    }
    const before = this.patch(this.root, this.gangs, base, policy) ?? this.patch(null, [], base, policy)!;
    if (before.frozen) {
      this.root = base;
      this.gangs = before.gangs;
    }
    const now = this.patch(base, before.gangs, jobs, policy) ?? this.patch(null, [], jobs, policy)!;
    return ends(now.gangs, at);
  }

  /** The gangs of `to`, patched from `gangs`, those of `from` (null: an empty table), or null when a leaf of `from` that differs is not known. */
  private patch(from: Jobs | null, gangs: readonly Gang[], to: Jobs, policy: Policy): Read | null {
    const removed = new Set<Gang>();
    const added: Gang[] = [];
    let known = true;
    const frozen = diffShards(from, to, (_, was, now) => {
      if (was !== null && was !== undefined) {
        const old = this.leaves.get(was);
        if (old === undefined) known = false;
        else for (const g of old) removed.add(g);
      }
      if (now !== null && now !== undefined) added.push(...this.leafGangs(now as JobState[], policy));
    });
    if (!known) return null;
    added.sort(byDue);
    const out: Gang[] = [];
    let i = 0;
    for (const g of gangs) {
      if (removed.has(g)) continue;
      while (i < added.length && byDue(added[i]!, g) < 0) out.push(added[i++]!);
      out.push(g);
    }
    while (i < added.length) out.push(added[i++]!);
    return { gangs: out, frozen };
  }

  /** The running gangs of one leaf of the jobs table with something on the index (remembered when the leaf is frozen). */
  private leafGangs(leaf: readonly JobState[], policy: Policy): Gang[] {
    const known = this.leaves.get(leaf);
    if (known !== undefined) return known;
    const out: Gang[] = [];
    for (const job of leaf) {
      if (job.status !== 'running') continue;
      const uses = heldUses(this.index!, job);
      if (uses.length === 0) continue;
      const runtime = plannedRuntime(job, policy);
      out.push({ due: job.committedAt === undefined ? null : job.committedAt + runtime, runtime, jobId: job.spec.id, uses });
    }
    if (Object.isFrozen(leaf)) this.leaves.set(leaf, out);
    return out;
  }
}

/** The gangs with their expected ends at `at` (`expectedEnd`), by end, ties by job id. */
function ends(gangs: readonly Gang[], at: number): Running[] {
  const out = gangs.map((g) => ({ end: Math.max(at, g.due ?? at + g.runtime), jobId: g.jobId, uses: g.uses }));
  // an end that depends on `at` breaks the kept order: sort afresh
  if (gangs.some((g) => g.due === null)) return out.sort(byEnd);
  // those due by `at` all end at `at`: among them, job id order
  let due = 0;
  while (due < gangs.length && gangs[due]!.due! <= at) due++;
  if (due > 1) out.splice(0, due, ...out.slice(0, due).sort(byEnd));
  return out;
}

// (gangs without a commit time first: any total order keeps the merge right, and `ends` sorts them afresh)
function byDue(a: Gang, b: Gang): number {
  return (a.due ?? -Infinity) - (b.due ?? -Infinity) || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0);
}

/** Running gangs by expected end, ties by job id. */
export function byEnd(a: Running, b: Running): number {
  return a.end - b.end || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0);
}
