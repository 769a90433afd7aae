import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import pino from 'pino';
import { connect, publishInput } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { canonicalJson, runScenario, shardEntriesSorted } from '@muster/core';
import type { JobState, Step as ScenarioStep, Transaction } from '@muster/core';
import { startScheduler } from '@muster/scheduler';
import type { SchedulerHandle } from '@muster/scheduler';
import { job, slotNode } from '@muster/core/testing';
import { Cluster, advance, cancel, done, lose, register, schedule, submit } from '@muster/core/testing';
import type { Step as GivenStep } from '@muster/core/testing';
import { readWholeLog } from '../support/musterLog.ts';
import { startNatsServer } from '../support/natsServer.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { eventually } from '../support/schedulerProcess.ts';

// DESIGN.md §1, "One turn, written once": the leader over a real nats-server, `muster simulate`
// and the test harness `given()` drive the same turn of the core, so for the same inputs at the
// same stamped times they write the same transactions, byte for byte (but for the leader's
// LeaderElected, which only a leader writes, and the hash chain that therefore starts from it).
// The leader takes one input a turn (maxBatchInputs 1) on a clock the test moves; every input and
// every advance of time is followed by a session, as the leader runs one in every turn.

/** One thing that happens, in terms every driver can be given. */
type Op =
  | { kind: 'register'; node: Record<string, unknown> }
  | { kind: 'submit'; job: Record<string, unknown> }
  | { kind: 'done'; jobId: string; member: number; node: string; ok: boolean }
  | { kind: 'cancel'; jobId: string }
  | { kind: 'lost'; nodeId: string }
  | { kind: 'advance'; ms: number };

/** What a generator asks for; picks are resolved against the state as it is then. */
type Intent =
  | { kind: 'submit'; tasks: number; cpu: number; timeoutMs: number | undefined; priority: number }
  | { kind: 'finish'; pick: number; ok: boolean }
  | { kind: 'cancel'; pick: number }
  | { kind: 'lost'; pick: number }
  | { kind: 'join'; slots: number }
  | { kind: 'advance'; ms: number };

const intentArb: fc.Arbitrary<Intent> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('submit' as const), tasks: fc.integer({ min: 1, max: 5 }), cpu: fc.constantFrom(0, 500, 2000), timeoutMs: fc.option(fc.constantFrom(300, 1000, 5000), { nil: undefined }), priority: fc.constantFrom(0, 0, 1) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(), ok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lost' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('join' as const), slots: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(100, 400, 1500, 6000) }) },
);

/** The harness's steps for one op: the input (or the time passing), then a session. */
function givenSteps(op: Op): GivenStep[] {
  switch (op.kind) {
    case 'register':
      return [register(op.node), schedule()];
    case 'submit':
      return [submit(op.job), schedule()];
    case 'done':
      return [done(op.node, op.jobId, op.member, op.ok), schedule()];
    case 'cancel':
      return [cancel(op.jobId), schedule()];
    case 'lost':
      return [lose(op.nodeId), schedule()];
    case 'advance':
      return [advance(op.ms), schedule()];
  }
}

/** The scenario steps of `muster simulate` for one op. */
function scenarioSteps(op: Op): ScenarioStep[] {
  const then: ScenarioStep = { schedule: {} };
  switch (op.kind) {
    case 'register':
      return [{ node: op.node }, then];
    case 'submit':
      return [{ submit: op.job }, then];
    case 'done':
      return [{ done: { jobId: op.jobId, member: op.member, ok: op.ok } }, then];
    case 'cancel':
      return [{ cancel: { jobId: op.jobId } }, then];
    case 'lost':
      return [{ nodeLost: { nodeId: op.nodeId } }, then];
    case 'advance':
      return [{ advanceMs: op.ms }, then];
  }
}

/** The input a publisher or an agent sends for an op (null: time passing). */
function inputOf(op: Op): { subject: string; body: unknown } | null {
  switch (op.kind) {
    case 'register':
      return { subject: `muster.in.node.${String(op.node.id)}.register`, body: op.node };
    case 'submit':
      return { subject: 'muster.in.submit', body: op.job };
    case 'done':
      return { subject: `muster.in.node.${op.node}.done`, body: { jobId: op.jobId, member: op.member, ok: op.ok } };
    case 'cancel':
      return { subject: 'muster.in.cancel', body: { jobId: op.jobId } };
    case 'lost':
      return { subject: `muster.in.node.${op.nodeId}.lost`, body: {} };
    case 'advance':
      return null;
  }
}

/** The harness's run of the ops, with how many transactions the log holds after each op. */
function runGiven(ops: readonly Op[]): { cluster: Cluster; counts: number[] } {
  const cluster = new Cluster();
  const counts: number[] = [];
  for (const op of ops) {
    for (const step of givenSteps(op)) cluster.run(step);
    counts.push(cluster.transactions.length);
  }
  return { cluster, counts };
}

/** Concrete ops from intents, each pick resolved against the harness's state as the ops before it left it. */
function resolve(intents: readonly Intent[]): Op[] {
  const ops: Op[] = [0, 1].map((i) => ({ kind: 'register', node: slotNode(`n${i}`, 3, { cpu: 4000 }) }));
  const cluster = new Cluster();
  for (const op of ops) for (const step of givenSteps(op)) cluster.run(step);
  let jobs = 0;
  let nodes = ops.length;
  for (const intent of intents) {
    const all = allJobs(cluster);
    const running = all.filter((j) => j.status === 'running');
    let op: Op | null = null;
    if (intent.kind === 'submit') {
      op = { kind: 'submit', job: job(`j${jobs++}`, { tasks: intent.tasks, cpu: intent.cpu, memoryMb: 0, priority: intent.priority, ...(intent.timeoutMs === undefined ? {} : { timeoutMs: intent.timeoutMs }) }) };
    } else if (intent.kind === 'finish' && running.length > 0) {
      const j = running[intent.pick % running.length]!;
      const member = j.members.findIndex((m) => m !== null && !m.done);
      if (member >= 0) op = { kind: 'done', jobId: j.spec.id, member, node: j.members[member]!.node, ok: intent.ok };
    } else if (intent.kind === 'cancel' && all.length > 0) {
      op = { kind: 'cancel', jobId: all[intent.pick % all.length]!.spec.id };
    } else if (intent.kind === 'lost') {
      op = { kind: 'lost', nodeId: `n${intent.pick % nodes}` };
    } else if (intent.kind === 'join') {
      op = { kind: 'register', node: slotNode(`n${nodes++}`, intent.slots, { cpu: 4000 }) };
    } else if (intent.kind === 'advance') {
      op = { kind: 'advance', ms: intent.ms };
    }
    if (op === null) continue;
    ops.push(op);
    for (const step of givenSteps(op)) cluster.run(step);
  }
  return ops;
}

function allJobs(cluster: Cluster): JobState[] {
  return shardEntriesSorted(cluster.state.jobs).map(([, j]) => j);
}

/** A transaction as every driver must write it: the whole envelope but its link to the one before. */
function comparable(tx: Transaction): string {
  return canonicalJson({ ...tx, prev: null });
}

/** The leader's run: one replica over a fresh nats-server, fed the ops' inputs at the ops' times. */
async function runLeader(ops: readonly Op[], counts: readonly number[]): Promise<Transaction[]> {
  let now = 0;
  const server: NatsServerHandle = await startNatsServer();
  let scheduler: SchedulerHandle | null = null;
  let bus: Bus | null = null;
  try {
    scheduler = await startScheduler({
      natsUrl: server.url,
      id: 'simulator',
      logger: pino({ level: 'silent' }),
      leaseMs: 300,
      heartbeatTimeoutMs: 0,
      checkpointEvery: 0,
      snapshotEvery: 0,
      retainFinishedMs: 1e12,
      maxBatchInputs: 1,
      wallClock: () => now,
      stampMonotonic: () => now,
    });
    const leader = scheduler;
    bus = await connect({ servers: server.url, name: 'agreement' });
    await eventually(() => leader.role() === 'leader', 10_000, 'leadership');
    // the leader's LeaderElected is transaction 1; everything the other drivers write follows it
    for (const [i, op] of ops.entries()) {
      const input = inputOf(op);
      if (input === null) now += (op as { ms: number }).ms;
      else await publishInput(bus, input.subject, JSON.stringify(input.body), `agreement:${i}`);
      const expected = 1 + counts[i]!;
      await eventually(() => leader.state().seq >= expected, 10_000, `the leader's log to reach ${expected} transactions after op ${i} (${op.kind})`);
    }
    // anything the leader would write on its own (it must not) shows up here
    await new Promise((r) => setTimeout(r, 300));
    return (await readWholeLog(bus)).slice(1).map((l) => l.tx);
  } finally {
    await bus?.close();
    await scheduler?.stop();
    await server.stop();
  }
}

/** Runs the three drivers on the ops and expects the same transactions from each. */
async function expectAgreement(ops: readonly Op[]): Promise<void> {
  const { cluster, counts } = runGiven(ops);
  const harness = cluster.transactions.map((t) => comparable(t.tx));
  const simulated = runScenario({ nodes: [], steps: ops.flatMap(scenarioSteps) });
  if (!simulated.ok) throw new Error(simulated.error);
  expect(simulated.transactions.map((t) => comparable(t.tx))).toEqual(harness);
  const led = await runLeader(ops, counts);
  expect(led.map(comparable)).toEqual(harness);
}

describe('the leader, muster simulate and given() write the same transactions', () => {
  test('a job submitted after t=0 with a timeout is not timed out early (the harness once stamped nothing)', async () => {
    const ops: Op[] = [
      { kind: 'register', node: slotNode('n1', 1) },
      { kind: 'submit', job: job('fill') },
      { kind: 'advance', ms: 5000 },
      { kind: 'submit', job: job('late', { timeoutMs: 1000 }) },
      { kind: 'advance', ms: 100 },
    ];
    const { cluster } = runGiven(ops);
    const aborts = cluster.log.flat().filter((e) => e.type === 'GangAborted');
    expect(aborts).toEqual([expect.objectContaining({ jobId: 'late', final: false, reason: expect.objectContaining({ category: 'insufficient-resources' }) })]);
    await expectAgreement(ops);
  }, 60_000);

  test('over generated inputs at generated times: submits, timeouts, completions, cancels, node loss and joins', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(intentArb, { minLength: 4, maxLength: 24 }), async (intents) => {
        await expectAgreement(resolve(intents));
      }),
      { numRuns: 8, endOnFailure: true },
    );
  }, 300_000);
});
