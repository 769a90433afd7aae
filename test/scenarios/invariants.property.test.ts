import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { GangCommitted, SchedulerEvent } from '@muster/core';
import { foldTransactions } from '@muster/core';
import { requestOf } from '@muster/core';
import { freshIndexFromState, readLabels, releaseSessionIndex, sessionIndex } from '@muster/core/testing';
import type { HostIndexCache } from '@muster/core/testing';
import { turn, turnSteps } from '@muster/core';
import { TurnContext } from '@muster/core';
import { shardEntriesSorted, shardGet } from '@muster/core';
import { initialState } from '@muster/core';
import type { State } from '@muster/core';
import { stateHash } from '@muster/core';
import { alternativesJob, job, node } from '@muster/core/testing';
import type { JobOptions, NodeOptions } from '@muster/core/testing';
import { cancel, close, Cluster, done, drain, lose, register, retire, schedule, submit } from '@muster/core/testing';
import { invariantViolations, releaseViolations } from '@muster/core/testing';

// DESIGN.md §7 over random clusters and workloads, driven like the leader drives the core: inputs
// through `ingest` (submits, `done` completions, cancels, closes, drains, node losses, joins) and
// sessions, each a turn of the core (as the harness runs them), every transaction folded and checked.

const nodeArb: fc.Arbitrary<NodeOptions> = fc.record({
  cpu: fc.constantFrom(2000, 4000, 8000),
  memoryMb: fc.constantFrom(4096, 8192, 16384),
  slots: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  gpus: fc.constantFrom(0, 0, 2, 4, 8),
  domains: fc.constantFrom(1, 2),
  gpuMemoryMb: fc.constantFrom(16384, 40960),
  // a rack label most jobs never read: hosts that differ only in it share a class unless a job reads it
  labels: fc.record({ zone: fc.constantFrom('a', 'b'), rack: fc.constantFrom('r1', 'r2', 'r3') }),
});

const jobArb: fc.Arbitrary<JobOptions> = fc.record({
  tasks: fc.integer({ min: 1, max: 7 }),
  cpu: fc.constantFrom(0, 500, 1000, 3000),
  memoryMb: fc.constantFrom(0, 1024, 4096),
  gpus: fc.constantFrom(0, 0, 1, 2),
  gpuMemoryMb: fc.constantFrom(0, 20000),
  policy: fc.constantFrom('pack', 'pack', 'spread', 'same-node'),
  ptile: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  gpuLocality: fc.boolean(),
  user: fc.constantFrom('alice', 'bob', 'carol'),
  queue: fc.constantFrom('q1', 'q2'),
  priority: fc.constantFrom(0, 0, 1),
  select: fc.constantFrom('', '', '', "zone == 'a'", 'gpus >= 2', "zone == 'c'", "rack == 'r2'"),
  warm: fc.boolean(),
  timeoutMs: fc.option(fc.constantFrom(500, 3000), { nil: undefined }),
  runtimeLimitMs: fc.option(fc.constantFrom(400, 2500), { nil: undefined }),
  roles: fc.option(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 4 })), { nil: undefined }),
}).map((o) => {
  const size = o.roles === undefined ? o.tasks : o.roles[0] + o.roles[1];
  const out: JobOptions = {
    ...o,
    ptile: o.policy === 'pack' ? o.ptile : undefined,
    minInstances: o.warm ? size : 0,
    roles: o.roles === undefined ? undefined : [
      { name: 'head', count: o.roles[0], cpu: o.cpu ?? 0, memoryMb: o.memoryMb ?? 0 },
      { name: 'work', count: o.roles[1], cpu: 500, memoryMb: 512, gpus: o.gpus ?? 0, gpuMemoryMb: o.gpuMemoryMb ?? 0 },
    ],
  };
  return out;
});

// a job with alternatives (DESIGN.md §13): 2 or 3 variants, each its own gang, role names that
// differ per variant (so a commit read against the wrong variant shows), the job's own identity
const alternativesArb: fc.Arbitrary<{ job: JobOptions; variants: JobOptions[] }> = fc.record({
  job: jobArb,
  variants: fc.array(jobArb, { minLength: 2, maxLength: 3 }),
}).map(({ job: j, variants }) => ({
  job: { ...j, minInstances: 0 },
  variants: variants.map((v, i) => ({ ...v, roles: v.roles?.map((r) => ({ ...r, name: `${r.name}${i}` })) })),
}));

type Command =
  | { kind: 'submit'; job: JobOptions }
  | { kind: 'alternatives'; job: JobOptions; variants: JobOptions[] }
  | { kind: 'schedule'; advanceMs: number }
  | { kind: 'finish'; pick: number; ok: boolean }
  | { kind: 'cancel'; pick: number }
  | { kind: 'close'; pick: number }
  | { kind: 'lose'; pick: number }
  | { kind: 'drain'; pick: number }
  | { kind: 'join'; node: NodeOptions }
  | { kind: 'retire'; retainMs: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: jobArb.map((j): Command => ({ kind: 'submit', job: j })) },
  { weight: 2, arbitrary: alternativesArb.map((a): Command => ({ kind: 'alternatives', ...a })) },
  { weight: 4, arbitrary: fc.constantFrom(0, 0, 400, 1500).map((ms): Command => ({ kind: 'schedule', advanceMs: ms })) },
  { weight: 4, arbitrary: fc.record({ pick: fc.nat(), ok: fc.boolean() }).map((c): Command => ({ kind: 'finish', ...c })) },
  { weight: 1, arbitrary: fc.nat().map((pick): Command => ({ kind: 'cancel', pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick): Command => ({ kind: 'close', pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick): Command => ({ kind: 'lose', pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick): Command => ({ kind: 'drain', pick })) },
  { weight: 1, arbitrary: nodeArb.map((n): Command => ({ kind: 'join', node: n })) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1000).map((retainMs): Command => ({ kind: 'retire', retainMs })) },
);

function pickOf<T>(xs: readonly T[], n: number): T | undefined {
  return xs.length === 0 ? undefined : xs[n % xs.length];
}

// commits on a variant after the first, over a property's runs (the generator must reach them)
let laterVariants = 0;

function checkCommits(state: State, parts: SchedulerEvent[][]): void {
  for (const part of parts) {
    for (const e of part) {
      if (e.type !== 'GangCommitted') continue;
      const commit = e as GangCommitted;
      const members = commit.allocations.flatMap((a) => a.members).sort((a, b) => a - b);
      // all or nothing: a commit binds every member of the gang exactly once
      expect(members).toEqual(members.map((_, i) => i));
      expect(part.filter((x) => x.type === 'MemberBound' && x.jobId === e.jobId)).toHaveLength(members.length);
      // a commit names its variant exactly when the job has alternatives, and its allocations are
      // that variant's gang: its roles, each role's count, its per-member resources
      const spec = shardGet(state.jobs, commit.jobId)!.spec;
      expect(commit.alternative !== undefined).toBe(spec.alternatives !== undefined);
      const request = requestOf(spec, commit.alternative)!;
      if (commit.alternative !== undefined) laterVariants += commit.alternative > 0 ? 1 : 0;
      expect(members).toHaveLength(request.roles.reduce((n, r) => n + r.count, 0));
      for (const role of request.roles) {
        expect(commit.allocations.filter((a) => a.role === role.name).reduce((n, a) => n + a.members.length, 0)).toBe(role.count);
      }
      for (const a of commit.allocations) {
        const role = request.roles.find((r) => r.name === a.role)!;
        expect(role).toBeDefined();
        const n = a.members.length;
        expect(a.resources).toEqual({ cpu: role.resources.cpu * n, memoryMb: role.resources.memoryMb * n, gpus: role.resources.gpus * n });
        expect(a.gpuIds).toHaveLength(role.resources.gpus * n);
      }
      // the placement policy holds (of the request that committed)
      const placementSpec = request.placement;
      const nodes = new Set(commit.allocations.map((a) => a.node));
      if (placementSpec.policy === 'same-node') expect(nodes.size).toBe(1);
      if (placementSpec.policy === 'spread') expect(nodes.size).toBe(members.length);
      if (placementSpec.ptile !== undefined) for (const a of commit.allocations) expect(a.members.length).toBeLessThanOrEqual(placementSpec.ptile);
      if (placementSpec.gpuLocality) {
        for (const n of nodes) {
          const spec = shardGet(state.nodes, n)!.spec;
          const domains = new Set(commit.allocations.filter((a) => a.node === n).flatMap((a) => a.gpuIds).map((g) => spec.gpus.find((d) => d.id === g)!.nvlinkDomain));
          expect(domains.size).toBeLessThanOrEqual(1);
        }
      }
    }
  }
}

// The index a session reuses from the previous one equals one built from scratch.
function checkReusedIndex(state: State, cache: HostIndexCache): void {
  const reused = sessionIndex(state, cache);
  const fresh = freshIndexFromState(state, reused.index.labels);
  // grouped by every label read now, at least
  for (const label of readLabels(state)) expect(reused.index.labels?.has(label)).toBe(true);
  try {
    const view = (x: typeof fresh): unknown => ({
      offline: x.offline,
      ids: x.index.ids,
      arrays: [x.index.freeCpu, x.index.freeMem, x.index.freeSlots, x.index.freeGpu, x.index.key, x.index.gpuFree, x.index.domFree].map((a) => [...a]),
      trees: x.index.classes.map((c) => [c.maxCpu, c.maxMem, c.maxSlots, c.maxGpu, c.maxDom, c.minKey, ...c.ratioMax, ...c.cpuLevelKey, ...c.memLevelKey].map((a) => [...a])),
    });
    expect(view(reused)).toEqual(view(fresh));
  } finally {
    releaseSessionIndex(reused, cache);
  }
}

function runCommands(nodes: NodeOptions[], commands: Command[]): void {
  const c = new Cluster();
  const step = (parts: SchedulerEvent[][]): void => {
    // every transaction leaves the state consistent
    expect(invariantViolations(c.state)).toEqual([]);
    checkCommits(c.state, parts);
  };
  nodes.forEach((n, i) => step(c.run(register(node(`n${i}`, n)))));
  let jobs = 0;
  let joined = nodes.length;
  for (const cmd of commands) {
    const all = shardEntriesSorted(c.state.jobs).map(([, j]) => j);
    const running = all.filter((j) => j.status === 'running');
    const live = all.filter((j) => j.status === 'running' || j.status === 'pending');
    const up = shardEntriesSorted(c.state.nodes).filter(([, n]) => n.status !== 'lost').map(([id]) => id);
    switch (cmd.kind) {
      case 'submit':
        step(c.run(submit(job(`j${jobs++}`, cmd.job))));
        break;
      case 'alternatives':
        step(c.run(submit(alternativesJob(`j${jobs++}`, cmd.variants, cmd.job))));
        break;
      case 'schedule': {
        c.at += cmd.advanceMs;
        const before = c.state;
        // determinism: the same state and time give the same bytes, whatever the context holds
        const fresh = turn(new TurnContext(), before, null, [{ session: true }], { term: 1, leader: 'simulator', at: c.at });
        // and whether hosts are grouped by the labels jobs read or by every label
        const everyLabel = new TurnContext();
        everyLabel.hosts.everyLabel = true;
        const grouped = turn(everyLabel, before, null, [{ session: true }], { term: 1, leader: 'simulator', at: c.at });
        expect(grouped.transactions.map((t) => t.tx.events)).toEqual(fresh.transactions.map((t) => t.tx.events));
        // and whether it ran at once or in steps, paused after every attempt (as a leader runs it)
        const steps = turnSteps(new TurnContext(), before, null, [{ session: true }], { term: 1, leader: 'simulator', at: c.at });
        let pauses = 0;
        let stepped = steps.next();
        for (; stepped.done !== true; stepped = steps.next()) pauses++;
        expect(stepped.value.transactions.map((t) => t.hash)).toEqual(fresh.transactions.map((t) => t.hash));
        expect(pauses).toBeGreaterThanOrEqual(fresh.session?.attempted ?? 0);
        checkReusedIndex(before, c.context.hosts);
        const parts = c.run(schedule());
        const written = c.transactions.slice(c.transactions.length - parts.length);
        expect(written.map((t) => t.tx.events)).toEqual(fresh.transactions.map((t) => t.tx.events));
        // every transaction leaves the state consistent, and the turn's state is the fold of its transactions
        let folded = before;
        for (const t of written) {
          folded = foldTransactions(folded, [t]);
          expect(invariantViolations(folded)).toEqual([]);
          checkCommits(folded, [t.tx.events]);
        }
        expect(stateHash(c.state)).toBe(stateHash(folded));
        checkReusedIndex(c.state, c.context.hosts);
        break;
      }
      case 'finish': {
        const j = pickOf(running, cmd.pick);
        const m = j?.members.findIndex((x) => x !== null && !x.done) ?? -1;
        if (j !== undefined && m >= 0) step(c.run(done(j.members[m]!.node, j.spec.id, m, cmd.ok)));
        break;
      }
      case 'cancel': {
        const j = pickOf(live, cmd.pick);
        if (j !== undefined) step(c.run(cancel(j.spec.id)));
        break;
      }
      case 'close': {
        const j = pickOf(running.filter((x) => x.spec.minInstances > 0), cmd.pick);
        if (j !== undefined) step(c.run(close(j.spec.id)));
        break;
      }
      case 'lose': {
        const id = pickOf(up, cmd.pick);
        if (id !== undefined) step(c.run(lose(id)));
        break;
      }
      case 'drain': {
        const id = pickOf(up, cmd.pick);
        if (id !== undefined) step(c.run(drain(id)));
        break;
      }
      case 'join':
        step(c.run(register(node(`n${joined++}`, cmd.node))));
        break;
      case 'retire':
        step(c.run(retire(cmd.retainMs)));
        break;
    }
  }
  // replay: folding the log from the start gives the same state
  const replayed = foldTransactions(initialState(), c.transactions);
  expect(stateHash(replayed)).toBe(stateHash(c.state));
  // exact release: finish or cancel everything, then every node's use is back to zero
  for (const [, j] of shardEntriesSorted(c.state.jobs)) {
    if (j.status === 'running' && j.spec.minInstances > 0) step(c.run(close(j.spec.id)));
    else if (j.status === 'running' || j.status === 'pending') step(c.run(cancel(j.spec.id)));
  }
  expect(shardEntriesSorted(c.state.jobs).every(([, j]) => j.status !== 'running' && j.status !== 'pending')).toBe(true);
  expect(releaseViolations(c.state)).toEqual([]);
  expect(shardGet(c.state.jobs, 'nope')).toBeUndefined();
}

describe('DESIGN.md §7 invariants over random clusters and workloads', () => {
  test('no overcommit, all or nothing, no leftover provisional debit, exact release, determinism', () => {
    fc.assert(
      fc.property(fc.array(nodeArb, { minLength: 1, maxLength: 5 }), fc.array(commandArb, { minLength: 5, maxLength: 60 }), (nodes, commands) => {
        runCommands(nodes, commands);
      }),
      { numRuns: 150 },
    );
    expect(laterVariants).toBeGreaterThan(0);
  });

  test('members finishing one by one release exactly what was debited', () => {
    fc.assert(
      fc.property(fc.array(nodeArb, { minLength: 1, maxLength: 4 }), fc.array(jobArb, { minLength: 1, maxLength: 8 }), (nodes, jobs) => {
        const c = new Cluster();
        nodes.forEach((n, i) => c.run(register(node(`n${i}`, n))));
        jobs.forEach((j, i) => c.run(submit(job(`j${i}`, { ...j, minInstances: 0, timeoutMs: undefined }))));
        for (let round = 0; round < 10; round++) {
          c.run({ kind: 'schedule' });
          expect(invariantViolations(c.state)).toEqual([]);
          for (const [id, j] of shardEntriesSorted(c.state.jobs)) {
            if (j.status !== 'running') continue;
            j.members.forEach((m, i) => {
              if (m !== null && !m.done) c.run(done(m.node, id, i));
              expect(invariantViolations(c.state)).toEqual([]);
            });
          }
        }
        for (const [id, j] of shardEntriesSorted(c.state.jobs)) if (j.status === 'pending') c.run(cancel(id));
        expect(releaseViolations(c.state)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
