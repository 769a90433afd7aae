import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { foldTransactions, initialState, shardEntriesSorted, stateHash } from '@muster/core';
import type { SchedulerEvent, State } from '@muster/core';
import { job, node } from '@muster/core/testing';
import { invariantViolations } from '@muster/core/testing';
import { Cluster, advance, cancelPicked, done, finishPicked, lose, queue, register, schedule, submit } from '@muster/core/testing';

// DESIGN.md §13 over random workloads of elastic and plain gangs, with reclaim between two queues
// and lower-priority preemption inside them: an elastic gang never runs below a role's minCount or
// above its count and holds a prefix of each role's members (invariantViolations), no gang is ever
// partial (§7), members finishing one at a time (a gang winding down), every shrink and every stop by preemption has its preemptor's commit in the same
// transaction, a gang grows only in a session and never by preempting, and replay reproduces it all.

type Command =
  | { kind: 'elastic'; queue: number; min: number; count: number; cpuRole: boolean; priority: number }
  | { kind: 'plain'; queue: number; tasks: number; priority: number }
  | { kind: 'finish'; pick: number }
  | { kind: 'member'; pick: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'lose'; host: number }
  | { kind: 'advance'; ms: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('elastic' as const), queue: fc.nat(1), min: fc.integer({ min: 1, max: 8 }), count: fc.integer({ min: 1, max: 20 }), cpuRole: fc.boolean(), priority: fc.constantFrom(0, 1, 5) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('plain' as const), queue: fc.nat(1), tasks: fc.integer({ min: 1, max: 12 }), priority: fc.constantFrom(0, 1, 5) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('member' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lose' as const), host: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(500, 5_000) }) },
);

const QUEUES = ['a', 'b'];

function run(hosts: number, commands: readonly Command[]): Cluster {
  const c = new Cluster();
  for (let h = 0; h < hosts; h++) c.run(register(node(`h${h}`, { gpus: 8, cpu: 16_000, memoryMb: 512_000 })));
  for (const name of QUEUES) c.run(queue({ name, guaranteed: { gpus: hosts * 4 }, preemption: { withinQueue: 'lower-priority' } }));
  let n = 0;
  for (const cmd of commands) {
    const id = `j${n++}`;
    if (cmd.kind === 'elastic') {
      const count = Math.max(cmd.min, cmd.count);
      const roles = [{ name: 'trainer', count, minCount: cmd.min, gpus: 1, cpu: 1000, memoryMb: 1024 }];
      if (cmd.cpuRole) roles.unshift({ name: 'loader', count: 4, minCount: 1, gpus: 0, cpu: 2000, memoryMb: 1024 });
      c.run(submit(job(id, { roles, queue: QUEUES[cmd.queue]!, user: `u${cmd.queue}`, priority: cmd.priority })));
    } else if (cmd.kind === 'plain') {
      c.run(submit(job(id, { tasks: cmd.tasks, gpus: 1, cpu: 1000, memoryMb: 1024, queue: QUEUES[cmd.queue]!, user: `u${cmd.queue}`, priority: cmd.priority })));
    } else if (cmd.kind === 'finish') finishPicked(c, cmd.pick);
    else if (cmd.kind === 'member') finishOneMember(c, cmd.pick);
    else if (cmd.kind === 'cancel') cancelPicked(c, cmd.pick);
    else if (cmd.kind === 'lose') {
      check(c.state, c.run(lose(`h${cmd.host % hosts}`)));
      c.run(register(node(`h${cmd.host % hosts}`, { gpus: 8, cpu: 16_000, memoryMb: 512_000 })));
    } else c.run(advance(cmd.ms));
    check(c.state, c.run(schedule()));
  }
  return c;
}

/** One member of a running job, picked by a generated number, finishes (a gang winding down). */
function finishOneMember(c: Cluster, pick: number): void {
  const members = shardEntriesSorted(c.state.jobs).filter(([, j]) => j.status === 'running')
    .flatMap(([id, j]) => j.members.flatMap((m, i) => (m === null || m.done ? [] : [{ id, node: m.node, i }])));
  const m = members[pick % Math.max(1, members.length)];
  if (m !== undefined) c.run(done(m.node, m.id, m.i));
}

function check(state: State, parts: SchedulerEvent[][]): void {
  expect(invariantViolations(state)).toEqual([]);
  for (const part of parts) {
    const commits = new Set(part.filter((e) => e.type === 'GangCommitted').map((e) => (e as { jobId: string }).jobId));
    for (const e of part) {
      // a shrink, like a stop, is for a preemptor committed beside it
      if (e.type === 'GangResized' && e.by !== undefined) expect(commits.has(e.by), `${e.jobId} shrunk by ${e.by}`).toBe(true);
      if (e.type === 'GangAborted' && e.reason.category === 'preempted') expect(commits.has(e.reason.by!), `${e.jobId} stopped by ${e.reason.by}`).toBe(true);
      // growth preempts nothing: a transaction that grows a gang without a commit stops no one
      if (e.type === 'GangResized' && e.by === undefined && commits.size === 0) {
        expect(part.some((x) => x.type === 'AllocationReleased' && x.cause === 'preempted')).toBe(false);
      }
    }
  }
  // a resize's allocation names exactly the members the job holds after it
  for (const [id, j] of shardEntriesSorted(state.jobs)) {
    if (j.status !== 'running') continue;
    const allocated = j.allocations.flatMap((a) => a.members).sort((x, y) => x - y);
    const bound = j.members.flatMap((m, i) => (m === null ? [] : [i]));
    expect(allocated, `job ${id}`).toEqual(bound);
  }
}

describe('elastic gangs over random workloads (DESIGN.md §13)', () => {
  test('minimum and count, prefixes, whole gangs, one-transaction shrinks and stops hold; replay reproduces everything', () => {
    let resized = 0;
    let shrunk = 0;
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 4 }), fc.array(commandArb, { minLength: 5, maxLength: 40 }), (hosts, commands) => {
        const c = run(hosts, commands);
        const resizes = c.log.flat().filter((e) => e.type === 'GangResized');
        resized += resizes.length;
        shrunk += resizes.filter((e) => e.by !== undefined).length;
        const folded = foldTransactions(initialState(), c.transactions);
        expect(stateHash(folded)).toBe(stateHash(c.state));
        const again = run(hosts, commands);
        expect(again.transactions.map((t) => t.hash)).toEqual(c.transactions.map((t) => t.hash));
      }),
      { numRuns: 60 },
    );
    // the workloads do exercise growth and shrinking (about 70 and 35 with these seeds)
    expect(resized).toBeGreaterThan(20);
    expect(shrunk).toBeGreaterThan(5);
  });
});
