import { DEFAULT_RENDEZVOUS_PORTS } from '../contract/specLimits.ts';
import { activeRequest, heldMembers, isElastic, requestSize } from '../jobRequests.ts';
import { runningSizeIssues } from '../session/elasticGangs.ts';
import { memberResources } from '../lifecycle.ts';
import type { JobState } from '../state.ts';
import { shardEntriesSorted, shardGet } from '../shard.ts';
import type { State } from '../state.ts';

/**
 * The invariants of DESIGN.md §7 that one state can show, as a list of violations (empty: clean):
 * no overcommit (a GPU device serves one member), node use equal to what bound members hold,
 * all or nothing (a running gang has every member bound, a pending one none; an elastic gang
 * (DESIGN.md §13) a prefix of each role's members, between its minimum and its count, and is
 * listed for growth exactly while below its count), node member counts in step, no provisional
 * debit left after a transaction, the pending set and DRF usage in step with the jobs.
 */
export function invariantViolations(state: State): string[] {
  const out: string[] = [];
  const expected = new Map<string, { cpu: number; memoryMb: number; slots: number; gpus: number; gpuIds: number[] }>();
  const users = new Map<string, { cpu: number; memoryMb: number; gpus: number }>();
  for (const [id, job] of shardEntriesSorted(state.jobs)) {
    if (job.provisional.length > 0) out.push(`job ${id}: ${job.provisional.length} provisional debit(s) left`);
    const isPending = shardGet(state.pending, id) !== undefined;
    if (isPending !== (job.status === 'pending')) out.push(`job ${id}: status ${job.status} but pending set says ${isPending}`);
    if (job.status === 'pending' && job.members.some((m) => m !== null)) out.push(`job ${id}: pending with bound members`);
    if (job.status === 'running') out.push(...runningSizeViolations(state, id, job));
    job.members.forEach((m, i) => {
      if (m === null || m.released) return;
      if (job.status !== 'running') out.push(`job ${id}: member ${i} holds resources while ${job.status}`);
      const r = memberResources(job, m.role);
      const e = expected.get(m.node) ?? { cpu: 0, memoryMb: 0, slots: 0, gpus: 0, gpuIds: [] };
      e.cpu += r.cpu;
      e.memoryMb += r.memoryMb;
      e.slots += r.slots;
      e.gpus += r.gpus;
      e.gpuIds.push(...m.gpuIds);
      expected.set(m.node, e);
      if (m.gpuIds.length !== r.gpus) out.push(`job ${id}: member ${i} has ${m.gpuIds.length} GPU ids for ${r.gpus} GPUs`);
      const u = users.get(job.spec.identity.user) ?? { cpu: 0, memoryMb: 0, gpus: 0 };
      u.cpu += r.cpu;
      u.memoryMb += r.memoryMb;
      u.gpus += r.gpus;
      users.set(job.spec.identity.user, u);
    });
  }
  for (const [id, node] of shardEntriesSorted(state.nodes)) {
    for (const [jobId, count] of Object.entries(node.jobs)) {
      const job = shardGet(state.jobs, jobId);
      const bound = job === undefined ? 0 : job.members.filter((m) => m !== null && !m.released && m.node === id).length;
      if (bound !== count) out.push(`node ${id}: lists ${count} member(s) of job ${jobId} but ${bound} are bound there`);
    }
    const cap = node.spec.capacity;
    const u = node.used;
    const e = expected.get(id) ?? { cpu: 0, memoryMb: 0, slots: 0, gpus: 0, gpuIds: [] };
    if (u.cpu !== e.cpu || u.memoryMb !== e.memoryMb || u.slots !== e.slots || u.gpus !== e.gpus) {
      out.push(`node ${id}: used ${JSON.stringify(u)} but bound members hold ${JSON.stringify({ cpu: e.cpu, memoryMb: e.memoryMb, slots: e.slots, gpus: e.gpus })}`);
    }
    if (node.status !== 'lost') {
      if (u.cpu > cap.cpu || u.memoryMb > cap.memoryMb || (cap.slots !== undefined && u.slots > cap.slots) || u.gpus > node.spec.gpus.length) {
        out.push(`node ${id}: overcommitted, used ${JSON.stringify(u)} of ${JSON.stringify(cap)} and ${node.spec.gpus.length} GPUs`);
      }
    }
    if (new Set(e.gpuIds).size !== e.gpuIds.length) out.push(`node ${id}: a GPU device serves two members (${e.gpuIds.join(',')})`);
    const devices = new Set(node.spec.gpus.map((g) => g.id));
    const held = [...e.gpuIds].sort((a, b) => a - b);
    if (JSON.stringify(held) !== JSON.stringify(node.gpusUsed)) out.push(`node ${id}: gpusUsed ${node.gpusUsed.join(',')} but members hold ${held.join(',')}`);
    if (node.gpusUsed.some((g) => !devices.has(g))) out.push(`node ${id}: uses a GPU id it does not have`);
  }
  out.push(...rendezvousViolations(state));
  for (const [id] of state.retired === undefined ? [] : shardEntriesSorted(state.retired)) {
    if (shardGet(state.jobs, id) !== undefined) out.push(`job ${id}: retired and still in the jobs table`);
  }
  // evolve drops a usage row that is all zero, so a missing row reads as zero
  const zero = { cpu: 0, memoryMb: 0, gpus: 0 };
  for (const user of new Set([...users.keys(), ...Object.keys(state.usage.users)])) {
    const row = state.usage.users[user] ?? zero;
    const u = users.get(user) ?? zero;
    if (row.cpu !== u.cpu || row.memoryMb !== u.memoryMb || row.gpus !== u.gpus) {
      out.push(`usage of ${user}: ${JSON.stringify(row)} but members hold ${JSON.stringify(u)}`);
    }
  }
  return out;
}

/**
 * Rendezvous (DESIGN.md §15): only a running gang holds one, on the node of its member 0, within
 * that node's range; each node lists, ascending and once each, exactly the ports its running
 * gangs hold (so no port is held twice on a node); only a pending job waits out a backoff.
 */
function rendezvousViolations(state: State): string[] {
  const out: string[] = [];
  const held = new Map<string, number[]>();
  for (const [id, job] of shardEntriesSorted(state.jobs)) {
    if (job.notBefore !== undefined && job.status !== 'pending') out.push(`job ${id}: ${job.status} with a restart backoff until ${job.notBefore}`);
    const r = job.rendezvous;
    if (r === undefined) continue;
    if (job.status !== 'running') out.push(`job ${id}: ${job.status} but holds rendezvous port ${r.port} on ${r.node}`);
    const zero = job.members[0];
    if (zero !== null && zero !== undefined && zero.node !== r.node) out.push(`job ${id}: rendezvous on ${r.node}, member 0 on ${zero.node}`);
    held.set(r.node, [...(held.get(r.node) ?? []), r.port]);
  }
  for (const [id, node] of shardEntriesSorted(state.nodes)) {
    const listed = node.rendezvousPorts ?? [];
    const expected = [...(held.get(id) ?? [])].sort((a, b) => a - b);
    if (node.rendezvousPorts !== undefined && listed.length === 0) out.push(`node ${id}: an empty list of rendezvous ports (absent when none)`);
    if (JSON.stringify(listed) !== JSON.stringify(expected)) out.push(`node ${id}: lists rendezvous ports [${listed.join(',')}] but running gangs hold [${expected.join(',')}]`);
    if (new Set(expected).size !== expected.length) out.push(`node ${id}: a rendezvous port is held twice ([${expected.join(',')}])`);
    const range = node.spec.ports ?? DEFAULT_RENDEZVOUS_PORTS;
    if (expected.some((p) => p < range.from || p > range.to)) out.push(`node ${id}: a rendezvous port outside ${range.from}..${range.to}`);
  }
  return out;
}

// A running gang's size (runningSizeIssues), and whether it is in the table of gangs to grow
// exactly while below its count.
function runningSizeViolations(state: State, id: string, job: JobState): string[] {
  const listed = state.elastic !== undefined && shardGet(state.elastic, id) !== undefined;
  const request = activeRequest(job);
  const below = isElastic(request) && heldMembers(job) < requestSize(request);
  const out = runningSizeIssues(job).map((issue) => `job ${id}: ${issue}`);
  if (listed !== below) out.push(`job ${id}: ${below ? 'below' : 'at'} its full size but ${listed ? 'is' : 'is not'} listed for growth`);
  return out;
}

/** Exact release: with nothing running, every node's use is zero and no usage is left. */
export function releaseViolations(state: State): string[] {
  const out: string[] = [];
  for (const [id, node] of shardEntriesSorted(state.nodes)) {
    const u = node.used;
    if (u.cpu !== 0 || u.memoryMb !== 0 || u.slots !== 0 || u.gpus !== 0 || node.gpusUsed.length > 0) out.push(`node ${id}: still uses ${JSON.stringify(u)} gpus ${node.gpusUsed.join(',')}`);
    if (Object.keys(node.jobs).length > 0) out.push(`node ${id}: still lists jobs ${Object.keys(node.jobs).join(',')}`);
  }
  if (Object.keys(state.usage.users).length > 0 || Object.keys(state.usage.queues).length > 0) out.push(`usage left: ${JSON.stringify(state.usage)}`);
  return out;
}
