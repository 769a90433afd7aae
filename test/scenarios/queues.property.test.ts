import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { QUEUE_RESOURCES, foldTransactions, initialState, queueViews, stateHash } from '@muster/core';
import type { QueueView, SchedulerEvent, State } from '@muster/core';
import { alternativesJob, job, node } from '@muster/core/testing';
import { invariantViolations } from '@muster/core/testing';
import { Cluster, advance, cancelPicked, finishPicked, queue, register, schedule, submit } from '@muster/core/testing';

// DESIGN.md §12 over random queue trees and workloads: no queue is ever above its max, a reclaim
// victim's queue was borrowing and is not taken below its guarantee, no gang is ever partial (§7),
// every preemption has its preemptor's commit in the same transaction, and replay reproduces it all.

interface Tree {
  queues: Record<string, unknown>[];
  leaves: string[];
}

const resourcesArb = fc.record({ gpus: fc.option(fc.integer({ min: 0, max: 24 }), { nil: undefined }) });

const treeArb: fc.Arbitrary<Tree> = fc.array(
  fc.record({
    guaranteed: resourcesArb,
    max: fc.option(fc.integer({ min: 4, max: 32 }), { nil: undefined }),
    weight: fc.constantFrom(1, 1, 2, 3),
    withinQueue: fc.constantFrom('never', 'never', 'lower-priority'),
    reclaim: fc.constantFrom(true, true, false),
    children: fc.integer({ min: 0, max: 3 }),
  }),
  { minLength: 1, maxLength: 3 },
).map((roots) => {
  const queues: Record<string, unknown>[] = [];
  const leaves: string[] = [];
  roots.forEach((r, i) => {
    const gpus = r.guaranteed.gpus;
    const max = r.max === undefined ? {} : { gpus: Math.max(r.max, gpus ?? 0) };
    const spec = (name: string, parent?: string) => ({
      name, ...(parent === undefined ? {} : { parent }), weight: r.weight,
      guaranteed: gpus === undefined ? {} : { gpus: parent === undefined ? gpus : Math.floor(gpus / Math.max(1, r.children)) }, max,
      preemption: { withinQueue: r.withinQueue, reclaim: r.reclaim },
    });
    queues.push(spec(`q${i}`));
    if (r.children === 0) leaves.push(`q${i}`);
    for (let c = 0; c < r.children; c++) {
      queues.push(spec(`q${i}c${c}`, `q${i}`));
      leaves.push(`q${i}c${c}`);
    }
  });
  return { queues, leaves };
});

type Command =
  | { kind: 'submit'; leaf: number; tasks: number; priority: number; or?: number }
  | { kind: 'finish'; pick: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'advance'; ms: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('submit' as const), leaf: fc.nat(), tasks: fc.integer({ min: 1, max: 12 }), priority: fc.constantFrom(0, 0, 1, 5) }) },
  // a job with alternatives (DESIGN.md §13): `tasks` GPU members, or `or` CPU-only ones; each variant admitted and preempting on its own
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('submit' as const), leaf: fc.nat(), tasks: fc.integer({ min: 1, max: 16 }), priority: fc.constantFrom(0, 1, 5), or: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(500, 5_000) }) },
);

function useOf(state: State): Map<string, QueueView> {
  return new Map(queueViews(state).map((v) => [v.name, v]));
}

/** Runs a tree and commands on a fresh cluster, checking the invariants after every session; returns the cluster. */
function run(hosts: number, tree: Tree, commands: readonly Command[], minRuntimeMs: number): Cluster {
  const c = new Cluster();
  if (minRuntimeMs > 0) c.run({ kind: 'policy', spec: { minRuntimeBeforePreemptionMs: minRuntimeMs } });
  for (let h = 0; h < hosts; h++) c.run(register(node(`h${h}`, { gpus: 8, cpu: 64_000, memoryMb: 512_000 })));
  for (const q of tree.queues) expect(c.run(queue(q)).flat().map((e) => e.type)).toEqual(['QueueSet']);
  let n = 0;
  for (const cmd of commands) {
    if (cmd.kind === 'submit') {
      const leaf = tree.leaves[cmd.leaf % tree.leaves.length]!;
      const who = { queue: leaf, user: `u${cmd.leaf % 2}`, priority: cmd.priority };
      if (cmd.or === undefined) c.run(submit(job(`j${n++}`, { tasks: cmd.tasks, gpus: 1, cpu: 1000, memoryMb: 1024, ...who })));
      else c.run(submit(alternativesJob(`j${n++}`, [{ tasks: cmd.tasks, gpus: 1, cpu: 1000, memoryMb: 1024 }, { tasks: cmd.or, cpu: 4000, memoryMb: 8192 }], who)));
    } else if (cmd.kind === 'finish') finishPicked(c, cmd.pick);
    else if (cmd.kind === 'cancel') cancelPicked(c, cmd.pick);
    else c.run(advance(cmd.ms));
    const before = useOf(c.state);
    const parts = c.run(schedule());
    check(c.state, before, parts);
  }
  return c;
}

function check(state: State, before: ReturnType<typeof useOf>, parts: SchedulerEvent[][]): void {
  expect(invariantViolations(state)).toEqual([]);
  const after = useOf(state);
  // no queue above its max
  for (const [name, q] of after) for (const r of QUEUE_RESOURCES) if (q.max[r] !== undefined) expect(q.used[r], `queue ${name} ${r}`).toBeLessThanOrEqual(q.max[r]!);
  const withinQueue = parts.flat().some((e) => e.type === 'GangAborted' && e.reason.category === 'preempted' && !e.reason.message.includes('reclaims'));
  for (const part of parts) {
    const commits = new Set(part.filter((e) => e.type === 'GangCommitted').map((e) => (e as { jobId: string }).jobId));
    for (const e of part) {
      if (e.type !== 'GangAborted' || e.reason.category !== 'preempted') continue;
      // no preemption without its preemptor's commit in the same transaction
      expect(commits.has(e.reason.by!), `victim ${e.jobId} by ${e.reason.by}`).toBe(true);
      const m = /from queue (\S+), which borrows/.exec(e.reason.message);
      if (m === null) continue;
      const victimQueue = m[1]!;
      const was = before.get(victimQueue)!;
      const named = QUEUE_RESOURCES.filter((r) => was.guaranteed[r] !== undefined);
      // a reclaim victim's queue was borrowing
      const borrowing = named.length === 0 ? QUEUE_RESOURCES.some((r) => was.used[r] > 0) : named.some((r) => was.used[r] > was.guaranteed[r]!);
      expect(borrowing, `queue ${victimQueue} was not borrowing`).toBe(true);
      // and is not taken below its guarantee (unless a within-queue preemption in the same session also took from it)
      if (!withinQueue) for (const r of named) if (was.used[r] >= was.guaranteed[r]!) expect(after.get(victimQueue)!.used[r]).toBeGreaterThanOrEqual(Math.min(was.guaranteed[r]!, was.used[r]));
    }
  }
}

describe('queues and preemption over random trees and workloads (DESIGN.md §12)', () => {
  test('max, guarantees, whole gangs and one-transaction preemption hold; replay reproduces everything', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 4 }), treeArb, fc.array(commandArb, { minLength: 5, maxLength: 40 }), fc.constantFrom(0, 0, 3_000), (hosts, tree, commands, minRuntimeMs) => {
        const c = run(hosts, tree, commands, minRuntimeMs);
        // replay: folding the log gives the same state, and running the same inputs again writes the same bytes
        const folded = foldTransactions(initialState(), c.transactions);
        expect(stateHash(folded)).toBe(stateHash(c.state));
        const again = run(hosts, tree, commands, minRuntimeMs);
        expect(again.transactions.map((t) => t.hash)).toEqual(c.transactions.map((t) => t.hash));
      }),
      { numRuns: 60 },
    );
  });
});
