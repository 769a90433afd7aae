import { memberResources } from '../lifecycle.ts';
import type { HostIndex } from '../placement/hostIndex.ts';
import type { JobState } from '../state.ts';

// What gangs hold on the session's host index, and giving it back or taking it again: shared by
// reservation planning (gangs expected to end) and preemption (gangs that would be stopped).

/** Resources and devices of one gang or plan on one host of the index. */
export interface HostUse {
  host: number;
  cpu: number;
  mem: number;
  slots: number;
  /** Device indices within the host's class. */
  gpus: number[];
}

/** Gives `uses` back to their hosts (1) or takes them (-1), the index's trees set once at the end. */
export function change(index: HostIndex, uses: readonly HostUse[], sign: 1 | -1): void {
  // (inside a caller's own deferral, the caller sets the trees)
  const own = index.deferTrees();
  for (const u of uses) {
    if (sign === 1) index.credit(u.host, u.cpu, u.mem, u.slots, u.gpus);
    else index.take(u.host, u.cpu, u.mem, u.slots, u.gpus);
  }
  if (own) index.flushTrees();
}

/** What a running job's members that still hold resources take (only those `only` accepts, when given), per host of the index. */
export function heldUses(index: HostIndex, job: JobState, only: ((member: number) => boolean) | null = null): HostUse[] {
  const hostOf = index.hostOf;
  const byHost = new Map<number, HostUse>();
  job.members.forEach((m, i) => {
    if (m === null || m.released || (only !== null && !only(i))) return;
    const h = hostOf.get(m.node);
    if (h === undefined) return;
    const r = memberResources(job, m.role);
    const c = index.classes[index.cls[h]!]!;
    let use = byHost.get(h);
    if (use === undefined) {
      use = { host: h, cpu: 0, mem: 0, slots: 0, gpus: [] };
      byHost.set(h, use);
    }
    use.cpu += r.cpu;
    use.mem += r.memoryMb;
    use.slots += r.slots;
    for (const id of m.gpuIds) {
      const g = c.gpuIds.indexOf(id);
      if (g >= 0) use.gpus.push(g);
    }
  });
  return [...byHost.values()].sort((a, b) => a.host - b.host);
}
