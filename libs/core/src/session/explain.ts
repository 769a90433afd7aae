import type { AbortCategory, AbortReason, Rendezvous } from '../events.ts';
import { activeRequest, heldMembers, isElastic, jobRequests, requestSelectAst, requestSize } from '../jobRequests.ts';
import { gangShape } from '../placement/gangShape.ts';
import type { GangShape } from '../placement/gangShape.ts';
import { HostCounter } from '../placement/hostCounter.ts';
import type { HostCounts } from '../placement/hostCounter.ts';
import { freshIndexFromState } from '../placement/sessionIndex.ts';
import { topologyRoom } from '../placement/topologyDomains.ts';
import type { DomainRoom, TopologyRoom } from '../placement/topologyDomains.ts';
import { evalSelect } from '../select/index.ts';
import { shardGet } from '../shard.ts';
import type { JobState, JobStatus, LastFailure, State } from '../state.ts';
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
  /**
   * A pending job with alternatives (DESIGN.md §13): per variant, in order, its gang size, how it
   * fared in the last recorded attempt, and the same fresh host counts as above (which then are
   * the first variant's). Absent for any other job.
   */
  alternatives?: AlternativeLook[];
  /** A running elastic gang (DESIGN.md §13): the members it holds now, its full size and its smallest. */
  size?: { size: number; count: number; minSize: number };
  /**
   * Contract v1.2 (DESIGN.md §15): the attempt the job is on (absent: 0), the last failure of a
   * member of its gang, while it waits out a restart's backoff the time before which it is not
   * placed, and a running gang's rendezvous.
   */
  attempt?: number;
  lastFailure?: LastFailure;
  notBefore?: number;
  rendezvous?: Rendezvous;
  /** One line for people. */
  text: string;
}

/** A running elastic gang's sizes, or null for a job whose request in force has no elastic role. */
function elasticSize(job: JobState): { size: number; count: number; minSize: number } | null {
  const request = activeRequest(job);
  if (!isElastic(request)) return null;
  return { size: heldMembers(job), count: requestSize(request), minSize: request.roles.reduce((n, r) => n + (r.minCount ?? r.count), 0) };
}

/** One variant of a pending job with alternatives, as explain sees it. */
export interface AlternativeLook {
  alternative: number;
  members: number;
  /** Its category in the recorded reason (absent: not tried yet). */
  category?: AbortCategory;
  hosts: Record<string, number>;
  fit: number;
  eligible: number;
  topology?: { key: string; domains: DomainRoom[]; unlabelled: number };
}

/** Explains a job from the state alone, or null for an unknown job. */
export function explain(state: State, jobId: string): Explanation | null {
  const job = shardGet(state.jobs, jobId);
  if (job === undefined) return null;
  const recorded = job.pendReason === null
    ? null
    : { category: job.pendReason.category, message: job.pendReason.message, ...(job.pendReason.cached === true ? { cached: true as const } : {}) };
  const base: Explanation = { jobId, status: job.status, reason: recorded, hosts: {}, fit: 0, eligible: 0, pendingSince: null, deadline: null, ...gangStory(job), text: '' };
  const story = storyText(job);
  if (job.status !== 'pending') {
    const variant = job.alternative === undefined ? '' : ` with alternative ${job.alternative}`;
    const size = elasticSize(job);
    // an elastic gang (DESIGN.md §13) says how large it is now: grown, or shrunk by a preemption
    const sized = size === null || job.status !== 'running' ? '' : ` with ${size.size} of ${size.count} members (at least ${size.minSize})`;
    const where = job.status === 'running' ? ` on ${new Set(job.allocations.map((a) => a.node)).size} host(s)${sized} since session ${job.session}${variant}` : '';
    const why = recorded !== null && job.status !== 'running' ? `: ${recorded.category} (${recorded.message})` : '';
    const limitAt = limitOf(job);
    const until = limitAt === null ? '' : `; its runtime limit stops it at ${limitAt}`;
    return { ...base, ...(limitAt === null ? {} : { limitAt }), ...(size === null || job.status !== 'running' ? {} : { size }), text: `job ${jobId} is ${job.status}${where}${why}${until}${story}` };
  }
  const { index, offline } = freshIndexFromState(state);
  const counter = new HostCounter(index, offline);
  // one look per request: the job's own, or each of its alternatives (DESIGN.md §13)
  const looks = jobRequests(job.spec).map((request, i): VariantLook => {
    const shape = gangShape(request);
    const ast = requestSelectAst(job, i);
    const classes = index.classes.filter((c) => ast === null || evalSelect(ast, { labels: c.spec.labels, capacity: c.spec.capacity, gpus: c.spec.gpus.length }));
    const heaviest = shape.roles[0]!;
    const counts = counter.count(classes, heaviest.resources, shape.placement.gpuLocality);
    return { shape, heaviest: heaviest.name, counts, room: topologyRoom(index, classes, shape, counter) };
  });
  const first = looks[0]!;
  // a queue's max, or the preemption that stopped it, is what decides such a job (DESIGN.md §12): said in full
  const why = recorded === null
    ? 'not tried yet'
    : recorded.category === 'quota' || recorded.category === 'preempted' || job.pendReason!.hosts['no-rendezvous-port'] !== undefined
      ? `${recorded.category}: ${recorded.message}`
      : `${recorded.category}${recorded.cached === true ? ' (cached)' : ''}`;
  const reservation = job.reservation === undefined || state.policy === undefined ? undefined : {
    startAt: job.reservation.startAt,
    hosts: job.reservation.hosts,
    waitsFor: waitedFor(state, state.policy, job.reservation.hosts, job.reservation.startAt),
  };
  const plan = reservation === undefined
    ? recorded?.category === 'reserved' ? `; held back: it ${recorded.message}${heldBackSince(state, job.pendReason!)}` : ''
    : `; reserved to start at ${reservation.startAt} on ${reservation.hosts.join(', ')}`
      + (reservation.waitsFor.length === 0 ? '' : `, waiting for ${reservation.waitsFor.map((g) => `${g.jobId} (ends ${g.endsAt})`).join(', ')}`);
  const detail = job.spec.alternatives === undefined
    ? lookText(first)
    : `${looks.length} alternatives: ${looks.map((look, i) => `alternative ${i}: ${lookText(look)}`).join('; ')}`;
  const text = `job ${jobId} is pending (${why}): ${detail}${plan}${story}`;
  const room = first.room;
  return {
    ...base, hosts: first.counts.hosts, fit: first.counts.fit, eligible: first.counts.eligible, pendingSince: job.pendingSince, deadline: deadlineOf(job),
    ...(reservation === undefined ? {} : { reservation }),
    ...(job.spec.alternatives === undefined && room !== null ? { topology: { key: room.key, domains: room.domains, unlabelled: room.unlabelled } } : {}),
    ...(job.spec.alternatives === undefined ? {} : {
      alternatives: looks.map((look, i) => ({
        alternative: i,
        members: look.shape.size,
        ...(recorded === null || job.pendReason?.alternatives?.[i] === undefined ? {} : { category: job.pendReason.alternatives[i].category }),
        hosts: look.counts.hosts,
        fit: look.counts.fit,
        eligible: look.counts.eligible,
        ...(look.room === null ? {} : { topology: { key: look.room.key, domains: look.room.domains, unlabelled: look.room.unlabelled } }),
      })),
    }),
    text,
  };
}

/** A job's attempt, last failure, backoff and rendezvous (contract v1.2), each only when it has one. */
function gangStory(job: JobState): Pick<Explanation, 'attempt' | 'lastFailure' | 'notBefore' | 'rendezvous'> {
  return {
    ...(job.attempt === undefined ? {} : { attempt: job.attempt }),
    ...(job.lastFailure === undefined ? {} : { lastFailure: job.lastFailure }),
    ...(job.notBefore === undefined ? {} : { notBefore: job.notBefore }),
    ...(job.rendezvous === undefined ? {} : { rendezvous: job.rendezvous }),
  };
}

/**
 * The restart story for people (DESIGN.md §15): restarting until T after member M exited 7,
 * attempt K of N; failed after K attempts; the attempt a running gang is on and where it meets.
 */
function storyText(job: JobState): string {
  const f = job.lastFailure;
  const how = f === undefined ? '' : `member ${f.member} on ${f.node} ${f.exitCode !== undefined ? `exited ${f.exitCode}` : f.signal !== undefined ? `was killed by ${f.signal}` : 'failed'} at ${f.at}`;
  const attempt = job.attempt ?? 0;
  const most = (job.spec.failurePolicy?.maxRestarts ?? 0) + 1;
  if (job.status === 'pending' && job.notBefore !== undefined) return `; restarting: not placed before ${job.notBefore}, after ${how}; next is attempt ${attempt} (at most ${most} attempts; lost nodes not counted)`;
  if (job.status === 'pending' && f !== undefined) return `; restarting after ${how}: attempt ${attempt} (at most ${most} attempts)`;
  if (job.status === 'failed' && f !== undefined) return `; failed after ${attempt + 1} attempt(s): ${how}`;
  const meets = job.rendezvous === undefined ? '' : `; meets at ${job.rendezvous.address}:${job.rendezvous.port}`;
  return job.status === 'running' ? `${attempt === 0 ? '' : `; attempt ${attempt}`}${meets}` : '';
}

/** What explain sees of one request of a pending job. */
interface VariantLook {
  shape: GangShape;
  heaviest: string;
  counts: HostCounts;
  room: TopologyRoom | null;
}

function lookText(look: VariantLook): string {
  const summary = Object.entries(look.counts.hosts).map(([k, n]) => `${n} ${k}`).join(', ');
  return `${look.shape.size} member(s); ${look.counts.fit} of ${look.counts.eligible} matching hosts `
    + `could take one '${look.heaviest}' member now${summary === '' ? '' : `; ${summary}`}`
    + `${look.room === null ? '' : `; all in one ${look.room.key}: ${look.room.message}`}`;
}

// a job held back stays so while other reservations stand (docs/scheduling-policy.md): says when
// the one its reason names is gone
function heldBackSince(state: State, recorded: AbortReason): string {
  if (recorded.by === undefined) return '';
  const by = shardGet(state.jobs, recorded.by);
  return by?.status === 'pending' && by.reservation !== undefined ? '' : ` (as first held back; ${recorded.by} is no longer reserved, other reservations are)`;
}
