import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { foldTransactions, initialState, shardEntriesSorted, shardGet, stateHash } from '@muster/core';
import type { JobState, SchedulerEvent, State } from '@muster/core';
import { Cluster, cancel, done, invariantViolations, job, lose, node, register, schedule, submit } from '@muster/core/testing';

// A gang fails as one (DESIGN.md §15) over random clusters and failures: a failing member never
// leaves another member of its attempt running or holding resources after the failure's
// transaction; no two attempts of a gang overlap; every rendezvous port is held once per node;
// replay of the log reproduces every restart, byte for byte.

interface Gang {
  tasks: number;
  policy: 'pack' | 'spread';
  maxRestarts: number;
  backoffMs: number;
  failOn: number | null;
  ignoreOn: number | null;
}

const gangArb: fc.Arbitrary<Gang> = fc.record({
  tasks: fc.integer({ min: 1, max: 5 }),
  policy: fc.constantFrom('pack', 'spread'),
  maxRestarts: fc.integer({ min: 0, max: 3 }),
  backoffMs: fc.constantFrom(0, 500, 2000),
  failOn: fc.option(fc.constantFrom(2, 7), { nil: null }),
  ignoreOn: fc.option(fc.constant(3), { nil: null }),
});

type Command =
  | { kind: 'submit'; gang: Gang }
  | { kind: 'schedule'; advanceMs: number }
  | { kind: 'exit'; pick: number; member: number; ok: boolean; exitCode: number; stale: boolean }
  | { kind: 'lose'; pick: number }
  | { kind: 'cancel'; pick: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: gangArb.map((gang): Command => ({ kind: 'submit', gang })) },
  { weight: 4, arbitrary: fc.constantFrom(0, 300, 1000, 2500).map((advanceMs): Command => ({ kind: 'schedule', advanceMs })) },
  {
    weight: 5,
    arbitrary: fc.record({ pick: fc.nat(), member: fc.nat(), ok: fc.boolean(), exitCode: fc.constantFrom(1, 2, 3, 7), stale: fc.boolean() })
      .map((c): Command => ({ kind: 'exit', ...c, stale: c.stale && c.pick % 3 === 0 })),
  },
  { weight: 1, arbitrary: fc.nat().map((pick): Command => ({ kind: 'lose', pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick): Command => ({ kind: 'cancel', pick })) },
);

function spec(id: string, g: Gang): Record<string, unknown> {
  const rules = [...(g.failOn === null ? [] : [{ onExitCodes: [g.failOn], action: 'fail' }]), ...(g.ignoreOn === null ? [] : [{ onExitCodes: [g.ignoreOn], action: 'ignore' }])];
  return { ...job(id, { tasks: g.tasks, policy: g.policy, cpu: 1000, memoryMb: 1024 }), failurePolicy: { maxRestarts: g.maxRestarts, backoffMs: g.backoffMs, rules } };
}

// restarts and failures seen over a property's runs (the generator must reach them)
const seen = { restarts: 0, failed: 0, portFailures: 0 };

/** The checks of one transaction's events against the states around it. */
function checkTransaction(before: State, after: State, events: readonly SchedulerEvent[], attempts: Map<string, number>): void {
  expect(invariantViolations(after)).toEqual([]);
  for (const e of events) {
    if (e.type === 'GangRestarting' || (e.type === 'JobFinished' && e.member !== undefined)) {
      if (e.type === 'GangRestarting') seen.restarts++;
      else seen.failed++;
      // every member that held resources before the failure's transaction is released in it
      const was = shardGet(before.jobs, e.jobId)!;
      const holding = was.members.flatMap((m, i) => (m !== null && !m.released ? [i] : []));
      const released = events.flatMap((x) => (x.type === 'AllocationReleased' && x.jobId === e.jobId ? x.members : []));
      expect([...released].sort((a, b) => a - b)).toEqual(holding);
      const now = shardGet(after.jobs, e.jobId)!;
      expect(now.members.filter((m) => m !== null && !m.released)).toEqual([]);
      expect(now.rendezvous).toBeUndefined();
    }
    if (e.type === 'GangCommitted') {
      // attempts never overlap: a commit starts the job's next attempt, the one before it all stopped
      const attempt = e.attempt ?? 0;
      const last = attempts.get(e.jobId);
      if (last !== undefined) expect(attempt).toBeGreaterThan(last);
      attempts.set(e.jobId, attempt);
      expect(shardGet(before.jobs, e.jobId)!.status).toBe('pending');
      expect(e.rendezvous?.node).toBe(e.allocations.find((a) => a.members.includes(0))!.node);
    }
    if (e.type === 'GangAborted' && e.reason.hosts['no-rendezvous-port'] !== undefined) seen.portFailures++;
  }
}

function running(c: Cluster): JobState[] {
  return shardEntriesSorted(c.state.jobs).map(([, j]) => j).filter((j) => j.status === 'running');
}

function runCommands(nodes: number, ports: number, commands: readonly Command[]): Cluster {
  const c = new Cluster();
  const attempts = new Map<string, number>();
  const step = (run: () => SchedulerEvent[][]): void => {
    let before = c.state;
    const start = c.transactions.length;
    run();
    for (const t of c.transactions.slice(start)) {
      const after = foldTransactions(before, [t]);
      checkTransaction(before, after, t.tx.events, attempts);
      before = after;
    }
  };
  for (let i = 0; i < nodes; i++) step(() => c.run(register({ ...node(`n${i}`, { cpu: 4000, memoryMb: 8192 }), ports: { from: 30000, to: 30000 + ports - 1 } })));
  let jobs = 0;
  for (const cmd of commands) {
    switch (cmd.kind) {
      case 'submit':
        step(() => c.run(submit(spec(`j${jobs++}`, cmd.gang))));
        break;
      case 'schedule':
        c.at += cmd.advanceMs;
        step(() => c.run(schedule()));
        break;
      case 'exit': {
        const gangs = running(c);
        const j = gangs[cmd.pick % Math.max(1, gangs.length)];
        if (j === undefined) break;
        const bound = j.members.flatMap((m, i) => (m !== null && !m.done ? [i] : []));
        if (bound.length === 0) break;
        const m = bound[cmd.member % bound.length]!;
        const attempt = (j.attempt ?? 0) - (cmd.stale ? 1 : 0);
        step(() => c.run(done(j.members[m]!.node, j.spec.id, m, cmd.ok, { exitCode: cmd.ok ? 0 : cmd.exitCode, ...(attempt >= 0 ? { attempt } : {}) })));
        break;
      }
      case 'lose': {
        const up = shardEntriesSorted(c.state.nodes).filter(([, n]) => n.status !== 'lost').map(([id]) => id);
        if (up.length > 1) step(() => c.run(lose(up[cmd.pick % up.length]!)));
        break;
      }
      case 'cancel': {
        const live = shardEntriesSorted(c.state.jobs).filter(([, j]) => j.status === 'pending' || j.status === 'running');
        if (live.length > 0) step(() => c.run(cancel(live[cmd.pick % live.length]![0])));
        break;
      }
    }
  }
  return c;
}

describe('a gang fails as one (DESIGN.md §15), over random clusters and failures', () => {
  test('failures stop whole attempts, attempts never overlap, ports are held once; replay reproduces every restart', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 3 }), fc.array(commandArb, { minLength: 5, maxLength: 60 }), (nodes, ports, commands) => {
        const c = runCommands(nodes, ports, commands);
        // replay: the log folds to the same state, and the same commands write the same bytes
        expect(stateHash(foldTransactions(initialState(), c.transactions))).toBe(stateHash(c.state));
        const again = runCommands(nodes, ports, commands);
        expect(again.transactions.map((t) => t.hash)).toEqual(c.transactions.map((t) => t.hash));
      }),
      { numRuns: 150, seed: 30 },
    );
    // the generator reaches restarts, failures and exhausted port ranges
    expect(seen.restarts).toBeGreaterThan(20);
    expect(seen.failed).toBeGreaterThan(20);
    expect(seen.portFailures).toBeGreaterThan(0);
  });
});
