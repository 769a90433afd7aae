import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { GangCommitted, SchedulerEvent } from '@muster/core';
import { shardGet } from '@muster/core';
import type { State } from '@muster/core';
import { job, node } from '@muster/core/testing';
import type { JobOptions } from '@muster/core/testing';
import { Cluster, complete, given, register, schedule, submit } from '@muster/core/testing';
import type { Step } from '@muster/core/testing';
import { invariantViolations } from '@muster/core/testing';

// DESIGN.md §13 and §7 over random racked clusters: a required topology is never violated, no gang
// is partial, a required gang is placed exactly when one rack alone could take it, and a preferred
// one exactly when it fits without topology.

const RACKS = ['r1', 'r2', 'r3'] as const;

interface HostArb {
  rack: string | null;
  slots: number;
  cpu: number;
  gpus: number;
  domains: number;
}

const hostArb: fc.Arbitrary<HostArb> = fc.record({
  rack: fc.constantFrom<string | null>(...RACKS, 'r1', null),
  slots: fc.integer({ min: 1, max: 6 }),
  cpu: fc.constantFrom(4000, 8000),
  gpus: fc.constantFrom(0, 0, 4, 8),
  domains: fc.constantFrom(1, 2),
});

const jobArb: fc.Arbitrary<JobOptions> = fc.record({
  tasks: fc.integer({ min: 1, max: 10 }),
  cpu: fc.constantFrom(0, 500, 1000, 3000),
  gpus: fc.constantFrom(0, 0, 1, 2),
  policy: fc.constantFrom<'pack' | 'spread' | 'same-node'>('pack', 'pack', 'spread', 'same-node'),
  ptile: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  gpuLocality: fc.boolean(),
  two: fc.option(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 4 })), { nil: undefined }),
}).map(({ two, ...o }): JobOptions => ({
  ...o,
  memoryMb: 512,
  ptile: o.policy === 'pack' ? o.ptile : undefined,
  roles: two === undefined ? undefined : [
    { name: 'head', count: two[0], cpu: o.cpu ?? 0, memoryMb: 512 },
    { name: 'work', count: two[1], cpu: 500, memoryMb: 512, gpus: o.gpus ?? 0 },
  ],
}));

function hostSteps(hosts: readonly HostArb[]): Step[] {
  return hosts.map((h, i) => register(node(`h${i}`, { cpu: h.cpu, slots: h.slots, gpus: h.gpus, domains: h.domains, labels: h.rack === null ? {} : { rack: h.rack } })));
}

function withTopology(body: Record<string, unknown>, mode: 'required' | 'preferred'): Record<string, unknown> {
  return { ...body, placement: { ...(body.placement as Record<string, unknown>), topology: { key: 'rack', mode } } };
}

/** What the test submitted for a job: its topology mode (null: none) and its size (known here, not read back from the spec). */
interface Submitted {
  mode: 'required' | 'preferred' | null;
  size: number;
}

function sizeOf(o: JobOptions): number {
  return o.roles === undefined ? o.tasks ?? 1 : o.roles.reduce((n, r) => n + r.count, 0);
}

/** Every problem of a commit: a partial gang; a required gang on hosts without the label or on more than one rack. */
function topologyViolations(state: State, commit: GangCommitted, submitted: Submitted): string[] {
  const out: string[] = [];
  const placed = commit.allocations.reduce((n, a) => n + a.members.length, 0);
  if (placed !== submitted.size) out.push(`job ${commit.jobId}: ${placed} of ${submitted.size} members placed`);
  if (submitted.mode !== 'required') return out;
  const racks = new Set(commit.allocations.map((a) => shardGet(state.nodes, a.node)!.spec.labels.rack));
  if (racks.has(undefined as never)) out.push(`job ${commit.jobId}: a member on a host without label rack`);
  if (racks.size > 1) out.push(`job ${commit.jobId}: members on ${racks.size} values of rack`);
  return out;
}

function commitsOf(events: readonly SchedulerEvent[]): GangCommitted[] {
  return events.filter((e): e is GangCommitted => e.type === 'GangCommitted');
}

/** Whether `target` (of `submitted` size and mode) commits in one session after `steps` (background jobs placed first). */
function commits(steps: readonly Step[], target: Record<string, unknown>, submitted: Submitted): boolean {
  const o = given(steps).when(submit(target)).when(schedule());
  expect(invariantViolations(o.state)).toEqual([]);
  const commit = o.commits.find((c) => c.jobId === target.id);
  if (commit !== undefined) expect(topologyViolations(o.state, commit, submitted)).toEqual([]);
  return commit !== undefined;
}

describe('topology, property-based', () => {
  test('a required gang is placed iff one rack alone could take it, on one rack; a preferred one iff it fits without topology', () => {
    fc.assert(fc.property(
      fc.array(hostArb, { minLength: 2, maxLength: 9 }),
      fc.array(jobArb, { maxLength: 4 }),
      jobArb,
      (hosts, background, target) => {
        const steps = [...hostSteps(hosts), ...background.map((b, i) => submit(job(`b${i}`, { ...b, user: 'other' }))), schedule()];
        const plain = job('t', { ...target, user: 'alice' });
        const size = sizeOf(target);
        const required = commits(steps, withTopology(plain, 'required'), { mode: 'required', size });
        const oneRack = RACKS.some((r) => commits(steps, { ...plain, select: `rack == '${r}'` }, { mode: null, size }));
        expect(required).toBe(oneRack);
        expect(commits(steps, withTopology(plain, 'preferred'), { mode: 'preferred', size })).toBe(commits(steps, plain, { mode: null, size }));
      },
    ), { numRuns: 150 });
  });

  test('over a random workload of topology jobs, sessions and completions, every state is clean and no required gang crosses racks', () => {
    const commandArb = fc.oneof(
      { weight: 4, arbitrary: fc.tuple(jobArb, fc.constantFrom<'required' | 'preferred' | null>('required', 'required', 'preferred', null)).map(([j, mode]) => ({ kind: 'submit' as const, j, mode })) },
      { weight: 3, arbitrary: fc.constant({ kind: 'schedule' as const }) },
      { weight: 2, arbitrary: fc.nat().map((pick) => ({ kind: 'finish' as const, pick })) },
    );
    fc.assert(fc.property(fc.array(hostArb, { minLength: 3, maxLength: 10 }), fc.array(commandArb, { minLength: 5, maxLength: 30 }), (hosts, commands) => {
      const cluster = new Cluster();
      for (const step of hostSteps(hosts)) cluster.run(step);
      let n = 0;
      const running: string[] = [];
      const submitted = new Map<string, Submitted>();
      for (const c of commands) {
        let parts: SchedulerEvent[][];
        if (c.kind === 'submit') {
          const id = `j${n++}`;
          const body = job(id, c.j);
          submitted.set(id, { mode: c.mode, size: sizeOf(c.j) });
          parts = cluster.run(submit(c.mode === null ? body : withTopology(body, c.mode)));
        } else if (c.kind === 'schedule') parts = cluster.run(schedule());
        else {
          if (running.length === 0) continue;
          const [id] = running.splice(c.pick % running.length, 1);
          parts = cluster.run(complete(id!));
        }
        for (const commit of commitsOf(parts.flat())) {
          running.push(commit.jobId);
          expect(topologyViolations(cluster.state, commit, submitted.get(commit.jobId)!)).toEqual([]);
        }
        expect(invariantViolations(cluster.state)).toEqual([]);
      }
    }), { numRuns: 60 });
  });
});
