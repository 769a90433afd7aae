import type { AbortReason } from '../events.ts';
import { gangShape } from '../placement/gangShape.ts';
import { HostCounter } from '../placement/hostCounter.ts';
import { freshIndexFromState } from '../placement/sessionIndex.ts';
import { topologyRoom } from '../placement/topologyDomains.ts';
import type { DomainRoom } from '../placement/topologyDomains.ts';
import { evalSelect } from '../select/index.ts';
import { shardGet } from '../shard.ts';
import type { JobStatus, State } from '../state.ts';
import type { Policy } from '../contract/types.ts';
import { deadlineOf } from './deadlines.ts';
import { expectedEnd, limitOf } from './runtimeLimits.ts';

/** The running gangs on `hosts` expected to end by `startAt` (what a reservation waits for), by end, then id. */
function waitedFor(state: State, policy: Policy, hosts: readonly string[], startAt: number): { jobId: string; endsAt: number }[] {
  const ids = new Set<string>();
  for (const host of hosts) for (const id of Object.keys(shardGet(state.nodes, host)?.jobs ?? {})) ids.add(id);
  const out: { jobId: string; endsAt: number }[] = [];
  for (const id of ids) {
    const job = shardGet(state.jobs, id);
    if (job === undefined || job.status !== 'running') continue;
    const endsAt = expectedEnd(job, policy, state.lastAt);
    if (endsAt <= startAt) out.push({ jobId: id, endsAt });
  }
  return out.sort((a, b) => a.endsAt - b.endsAt || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
}

/** Why a job is where it is, from the state alone (JSON only). */
export interface Explanation {
  jobId: string;
  status: JobStatus;
  /** The recorded reason: why it is pending, or why it ended (cancelled, timed out). */
  reason: Pick<AbortReason, 'category' | 'message' | 'cached'> | null;
  /** Fresh count of hosts per reason for one member of the heaviest role (pending jobs only). */
  hosts: Record<string, number>;
  /** Up, undrained hosts that pass select and could take that member now. */
  fit: number;
  /** Up, undrained hosts that pass select. */
  eligible: number;
  /** Pending since (stamped time), and the timeout deadline, when pending. */
  pendingSince: number | null;
  deadline: number | null;
  /**
   * A reserved job's plan (DESIGN.md §11): when it is expected to start, on which hosts, and the
   * running gangs on those hosts expected to end by then (what it waits for). Absent: not reserved.
   */
  reservation?: { startAt: number; hosts: string[]; waitsFor: { jobId: string; endsAt: number }[] };
  /** A running gang's runtime limit: when the first session at or after it stops the gang. */
  limitAt?: number;
  /**
   * A pending job with a required topology (DESIGN.md §13): per domain (value of the label), its
   * matching hosts and how many of them could take that member now; hosts without the label.
   */
  topology?: { key: string; domains: DomainRoom[]; unlabelled: number };
  /** One line for people. */
  text: string;
}

/** Explains a job from the state alone, or null for an unknown job. */
export function explain(state: State, jobId: string): Explanation | null {
  const job = shardGet(state.jobs, jobId);
  if (job === undefined) return null;
  const recorded = job.pendReason === null
    ? null
    : { category: job.pendReason.category, message: job.pendReason.message, ...(job.pendReason.cached === true ? { cached: true as const } : {}) };
  const base: Explanation = { jobId, status: job.status, reason: recorded, hosts: {}, fit: 0, eligible: 0, pendingSince: null, deadline: null, text: '' };
  if (job.status !== 'pending') {
    const where = job.status === 'running' ? ` on ${new Set(job.allocations.map((a) => a.node)).size} host(s) since session ${job.session}` : '';
    const why = recorded !== null && job.status !== 'running' ? `: ${recorded.category} (${recorded.message})` : '';
    const limitAt = limitOf(job);
    const until = limitAt === null ? '' : `; its runtime limit stops it at ${limitAt}`;
    return { ...base, ...(limitAt === null ? {} : { limitAt }), text: `job ${jobId} is ${job.status}${where}${why}${until}` };
  }
  const shape = gangShape(job.spec);
  const { index, offline } = freshIndexFromState(state);
  const ast = job.selectAst;
  const classes = index.classes.filter((c) => ast === null || evalSelect(ast, { labels: c.spec.labels, capacity: c.spec.capacity, gpus: c.spec.gpus.length }));
  const heaviest = shape.roles[0]!;
  const counter = new HostCounter(index, offline);
  const counts = counter.count(classes, heaviest.resources, shape.placement.gpuLocality);
  const room = topologyRoom(index, classes, shape, counter);
  const summary = Object.entries(counts.hosts).map(([k, n]) => `${n} ${k}`).join(', ');
  const why = recorded === null ? 'not tried yet' : `${recorded.category}${recorded.cached === true ? ' (cached)' : ''}`;
  const reservation = job.reservation === undefined || state.policy === undefined ? undefined : {
    startAt: job.reservation.startAt,
    hosts: job.reservation.hosts,
    waitsFor: waitedFor(state, state.policy, job.reservation.hosts, job.reservation.startAt),
  };
  const plan = reservation === undefined
    ? recorded?.category === 'reserved' ? `; held back: it ${recorded.message}` : ''
    : `; reserved to start at ${reservation.startAt} on ${reservation.hosts.join(', ')}`
      + (reservation.waitsFor.length === 0 ? '' : `, waiting for ${reservation.waitsFor.map((g) => `${g.jobId} (ends ${g.endsAt})`).join(', ')}`);
  const text = `job ${jobId} is pending (${why}): ${shape.size} member(s); ${counts.fit} of ${counts.eligible} matching hosts `
    + `could take one '${heaviest.name}' member now${summary === '' ? '' : `; ${summary}`}`
    + `${room === null ? '' : `; all in one ${room.key}: ${room.message}`}${plan}`;
  return {
    ...base, hosts: counts.hosts, fit: counts.fit, eligible: counts.eligible, pendingSince: job.pendingSince, deadline: deadlineOf(job),
    ...(reservation === undefined ? {} : { reservation }),
    ...(room === null ? {} : { topology: { key: room.key, domains: room.domains, unlabelled: room.unlabelled } }), text,
  };
}
