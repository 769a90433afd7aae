// A realistic, internally consistent event mix for benchmarks: nodes join, gangs are submitted,
// debited, bound, committed, their members complete and release, sessions start along the way.
import type { SchedulerEvent } from '@muster/core';
import type { JobSpec, NodeSpec } from '@muster/core';

/** A small deterministic PRNG (mulberry32), so every run folds the same events. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` events over `nodes` nodes: registrations first, then whole gang lifecycles. With
 * `retainJobs`, every 500 jobs a JobsRetired (as a leader's retention would write) retires the jobs
 * that finished more than `retainJobs` jobs ago (time here counts jobs).
 */
export function realisticEvents(count: number, nodes = 10_000, seed = 7, retainJobs?: number): SchedulerEvent[] {
  const rand = prng(seed);
  const events: SchedulerEvent[] = [];
  let inputSeq = 0;
  for (let i = 0; i < nodes && events.length < count; i++) {
    const gpu = i % 4 === 0;
    const node: NodeSpec = {
      id: `n${i}`,
      labels: { zone: `z${i % 8}`, ...(gpu ? { gpu_model: 'A100' } : {}) },
      capacity: { cpu: 64_000, memoryMb: 262_144, slots: 64 },
      gpus: gpu ? Array.from({ length: 8 }, (_, id) => ({ id, memoryMb: 81_920, model: 'A100', nvlinkDomain: id < 4 ? 0 : 1 })) : [],
    };
    events.push({ type: 'NodeRegistered', v: 1, inputSeq: ++inputSeq, node });
  }
  let job = 0;
  let session = 0;
  while (events.length < count) {
    const id = `j${job++}`;
    const members = 1 + Math.floor(rand() * 8);
    const spec: JobSpec = {
      id,
      identity: { user: `u${job % 50}`, queue: `q${job % 5}`, project: 'p' },
      priority: 0,
      roles: [{ name: 'task', count: members, resources: { cpu: 1000, memoryMb: 2048, gpus: 0, gpuMemoryMb: 0 } }],
      placement: { policy: 'pack', gpuLocality: false },
      select: '',
      minInstances: 0,
    };
    events.push({ type: 'JobSubmitted', v: 1, inputSeq: ++inputSeq, job: spec, fingerprint: `f${members}` });
    if (job % 10 === 1) events.push({ type: 'SessionStarted', session: ++session, at: job });
    const node = `n${Math.floor(rand() * nodes)}`;
    const resources = { cpu: 1000 * members, memoryMb: 2048 * members, slots: members, gpus: 0 };
    const memberIds = Array.from({ length: members }, (_, m) => m);
    events.push({ type: 'HostDebited', jobId: id, node, role: 'task', members: memberIds, resources, gpuIds: [] });
    for (const m of memberIds) events.push({ type: 'MemberBound', jobId: id, member: m, node, role: 'task', gpuIds: [] });
    events.push({ type: 'GangCommitted', jobId: id, session, at: job, allocations: [{ node, role: 'task', members: memberIds, gpuIds: [], resources: { cpu: resources.cpu, memoryMb: resources.memoryMb, gpus: 0 } }] });
    for (const m of memberIds) {
      events.push({ type: 'TaskCompleted', inputSeq: ++inputSeq, jobId: id, member: m, nodeId: node, ok: true });
      events.push({ type: 'AllocationReleased', jobId: id, node, role: 'task', members: [m], resources: { cpu: 1000, memoryMb: 2048, slots: 1, gpus: 0 }, gpuIds: [], cause: 'completed' });
    }
    events.push({ type: 'JobFinished', jobId: id, at: job, outcome: 'succeeded' });
    if (retainJobs !== undefined && job % 500 === 0 && job > retainJobs) {
      const jobIds = Array.from({ length: 500 }, (_, k) => `j${job - retainJobs - 500 + k}`).filter((_, k) => job - retainJobs - 500 + k >= 0);
      events.push({ type: 'JobsRetired', at: job, retainMs: retainJobs, jobIds });
    }
  }
  return events.slice(0, count);
}
