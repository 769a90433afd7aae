import { describe, expect, test } from 'vitest';
import { decisionMessages, explain, nextDeadline, shardGet } from '@muster/core';
import type { BindMessage, GangCommitted, JobFinished, SchedulerEvent } from '@muster/core';
import { Cluster, advance, cancel, complete, done, given, invariantViolations, job, lose, node, register, schedule, submit } from '@muster/core/testing';
import type { Outcome } from '@muster/core/testing';

// A gang runs as one (DESIGN.md §15, contract v1.2): its rendezvous is chosen at commit and held
// while it runs; a failing member stops the whole gang, which restarts or fails by its policy.

const four = (id: string, failurePolicy?: Record<string, unknown>): Record<string, unknown> => ({ ...job(id, { tasks: 4, policy: 'spread' }), ...(failurePolicy === undefined ? {} : { failurePolicy }) });
const nodes = [register({ ...node('n1'), address: '10.0.0.1' }), register({ ...node('n2'), address: '10.0.0.2' }), register(node('n3')), register(node('n4'))];

function commitOf(o: Outcome, jobId: string): GangCommitted {
  const commit = o.commits.find((c) => c.jobId === jobId);
  expect(commit, `a commit of ${jobId}`).toBeDefined();
  return commit!;
}

function ofType<T extends SchedulerEvent['type']>(o: Outcome, type: T): Extract<SchedulerEvent, { type: T }>[] {
  return o.events.filter((e): e is Extract<SchedulerEvent, { type: T }> => e.type === type);
}

/** The node of member `m` of a running job. */
function nodeOf(o: { state: Outcome['state'] }, jobId: string, m: number): string {
  return shardGet(o.state.jobs, jobId)!.members[m]!.node;
}

describe('rendezvous (DESIGN.md §15)', () => {
  test('a commit names member 0\'s node, its address and the lowest port of its range; binds carry the whole gang', () => {
    const g = given(nodes);
    const o = g.when(submit(four('a'))).when(schedule());
    const commit = commitOf(o, 'a');
    const zero = nodeOf(o, 'a', 0);
    expect(commit.rendezvous).toEqual({ node: zero, address: zero === 'n1' ? '10.0.0.1' : zero === 'n2' ? '10.0.0.2' : zero, port: 29500 });
    expect(commit.attempt).toBeUndefined();
    const tx = g.cluster.transactions.at(-1)!;
    const binds = decisionMessages(tx.seq, tx.tx, (id) => shardGet(o.state.jobs, id), (id) => shardGet(o.state.nodes, id))
      .filter((m) => m.subject.startsWith('muster.bind.')).map((m) => m.payload as BindMessage);
    expect(binds).toHaveLength(4);
    for (const bind of binds) {
      expect(bind.gang).toMatchObject({ attempt: 0, size: 4, rendezvous: commit.rendezvous });
      expect(bind.gang!.members.map((m) => m.member)).toEqual([0, 1, 2, 3]);
      expect(bind.gang!.members.find((m) => m.node === 'n1')?.address).toBe('10.0.0.1');
      expect(bind.gang!.members.find((m) => m.node === 'n3')?.address).toBe('n3');
    }
  });

  test('two gangs whose member 0 share a node get distinct ports; a finished gang frees its port for the next', () => {
    const g = given([register({ ...node('n1'), ports: { from: 40000, to: 40001 } }), submit(job('a', { tasks: 2 })), submit(job('b', { tasks: 2 })), schedule()]);
    const ports = g.cluster.log.flat().filter((e): e is GangCommitted => e.type === 'GangCommitted').map((c) => c.rendezvous?.port);
    expect(ports).toEqual([40000, 40001]);
    expect(shardGet(g.cluster.state.nodes, 'n1')!.rendezvousPorts).toEqual([40000, 40001]);
    g.when(complete('a'))
      .then((o) => expect(shardGet(o.state.nodes, 'n1')!.rendezvousPorts).toEqual([40001]))
      .when(submit(job('c', { tasks: 1 })))
      .when(schedule())
      .then((o) => {
        expect(commitOf(o, 'c').rendezvous?.port).toBe(40000);
        expect(invariantViolations(o.state)).toEqual([]);
      });
  });

  test('a gang whose member 0 would land on a node without a free port is placed again without that node', () => {
    const run = (ports?: { from: number; to: number }) => given([
      register({ ...node('n1'), ...(ports === undefined ? {} : { ports }) }), register(node('n2')),
      submit(job('a', { cpu: 1000 })), schedule(),
    ]).when(submit(job('b', { tasks: 2, cpu: 1000 }))).when(schedule());
    // with room for its port, b packs onto a's node
    expect(commitOf(run(), 'b').rendezvous).toMatchObject({ node: 'n1', port: 29501 });
    // with n1's one port held by a, b is placed without n1, member 0 with it
    const o = run({ from: 40000, to: 40000 });
    expect(commitOf(o, 'b').allocations.map((a) => a.node)).toEqual(['n2']);
    expect(commitOf(o, 'b').rendezvous).toMatchObject({ node: 'n2', port: 29500 });
    expect(o.aborts).toEqual([]);
    expect(invariantViolations(o.state)).toEqual([]);
  });

  test('a node whose range is exhausted is a placement failure that names the port', () => {
    given([register({ ...node('n1'), ports: { from: 40000, to: 40000 } }), submit(job('a')), schedule()])
      .when(submit(job('b')))
      .when(schedule())
      .then((o) => {
        expect(o.commits).toEqual([]);
        expect(o.aborts).toMatchObject([{ jobId: 'b', final: false, reason: { category: 'insufficient-resources', message: expect.stringContaining('no free rendezvous port on n1') } }]);
      })
      .when(complete('a'))
      .when(schedule())
      .then((o) => expect(commitOf(o, 'b').rendezvous).toEqual({ node: 'n1', address: 'n1', port: 40000 }));
  });
});

describe('failure is the gang\'s (DESIGN.md §15)', () => {
  test('exit 7 stops every other member and restarts the gang whole; it fails after maxRestarts', () => {
    const g = given([...nodes, submit(four('a', { maxRestarts: 1, backoffMs: 5000 })), schedule(), advance(1000)]);
    const failing = nodeOf(g.cluster, 'a', 1);
    const o = g.when(done(failing, 'a', 1, false, { exitCode: 7, attempt: 0 }));
    const released = ofType(o, 'AllocationReleased');
    expect(released.filter((r) => r.cause === 'member-failed').flatMap((r) => r.members).sort()).toEqual([0, 2, 3]);
    expect(released.filter((r) => r.cause === 'completed').flatMap((r) => r.members)).toEqual([1]);
    expect(ofType(o, 'GangRestarting')).toEqual([{ type: 'GangRestarting', jobId: 'a', at: 1000, member: 1, node: failing, exitCode: 7, attempt: 1, notBefore: 6000 }]);
    const stops = g.cluster.transactions.slice(-1).flatMap((t) => decisionMessages(t.seq, t.tx, (id) => shardGet(o.state.jobs, id))).filter((m) => m.subject.startsWith('muster.stop.'));
    expect(stops.map((m) => (m.payload as { reason: string }).reason)).toEqual(['member-failed', 'member-failed', 'member-failed']);
    const a = shardGet(o.state.jobs, 'a')!;
    expect(a).toMatchObject({ status: 'pending', attempt: 1, restarts: 1, notBefore: 6000, lastFailure: { member: 1, node: failing, exitCode: 7, at: 1000 } });
    expect(a.rendezvous).toBeUndefined();
    expect(invariantViolations(o.state)).toEqual([]);
    expect(nextDeadline(o.state)).toBe(6000);
    // not before notBefore
    o.when(schedule())
      .then((x) => expect(x.commits).toEqual([]))
      .when(advance(4999))
      .when(schedule())
      .then((x) => expect(x.commits).toEqual([]))
      .when(advance(1))
      .when(schedule())
      .then((x) => {
        expect(commitOf(x, 'a')).toMatchObject({ attempt: 1, rendezvous: { port: 29500 } });
        expect(shardGet(x.state.jobs, 'a')!.notBefore).toBeUndefined();
      })
      .when(done(nodeOf(g.cluster, 'a', 2), 'a', 2, false, { exitCode: 7, attempt: 1 }))
      .then((x) => {
        expect(ofType(x, 'GangRestarting')).toEqual([]);
        const finished = ofType(x, 'JobFinished');
        expect(finished).toEqual([{ type: 'JobFinished', jobId: 'a', at: 6000, outcome: 'failed', member: 2, node: expect.any(String), exitCode: 7, attempts: 2 } satisfies JobFinished]);
        expect(ofType(x, 'AllocationReleased').filter((r) => r.cause === 'member-failed').flatMap((r) => r.members).sort()).toEqual([0, 1, 3]);
        const a2 = shardGet(x.state.jobs, 'a')!;
        expect(a2).toMatchObject({ status: 'failed', attempt: 1, restarts: 1, lastFailure: { member: 2, exitCode: 7 } });
        for (const id of ['n1', 'n2', 'n3', 'n4']) expect(shardGet(x.state.nodes, id)!.rendezvousPorts).toBeUndefined();
        expect(invariantViolations(x.state)).toEqual([]);
      });
  });

  test('a rule {onExitCodes:[7], action:"fail"} fails the gang at once, whatever restarts remain', () => {
    const g = given([...nodes, submit(four('a', { maxRestarts: 5, rules: [{ onExitCodes: [7], action: 'fail' }] })), schedule()]);
    g.when(done(nodeOf(g.cluster, 'a', 3), 'a', 3, false, { exitCode: 7 }))
      .then((o) => {
        expect(ofType(o, 'JobFinished')).toMatchObject([{ outcome: 'failed', member: 3, exitCode: 7, attempts: 1 }]);
        expect(shardGet(o.state.jobs, 'a')!.status).toBe('failed');
        expect(invariantViolations(o.state)).toEqual([]);
      });
  });

  test('ignore keeps today\'s behaviour: the member just completes and the gang runs on', () => {
    const g = given([...nodes, submit(four('a', { rules: [{ onExitCodes: [3], action: 'ignore' }] })), schedule()]);
    g.when(done(nodeOf(g.cluster, 'a', 0), 'a', 0, false, { exitCode: 3 }))
      .then((o) => {
        expect(o.events.map((e) => e.type)).toEqual(['TaskCompleted', 'AllocationReleased']);
        expect(shardGet(o.state.jobs, 'a')!.status).toBe('running');
      })
      .when(complete('a'))
      .then((o) => expect(shardGet(o.state.jobs, 'a')!.status).toBe('failed'));
  });

  test('a job without failurePolicy is stopped and failed at its first failing member; a signal is named', () => {
    const g = given([...nodes, submit(four('a')), schedule()]);
    g.when(done(nodeOf(g.cluster, 'a', 2), 'a', 2, false, { signal: 'SIGKILL' }))
      .then((o) => {
        expect(ofType(o, 'JobFinished')).toMatchObject([{ outcome: 'failed', member: 2, signal: 'SIGKILL', attempts: 1 }]);
        expect(ofType(o, 'AllocationReleased')).toHaveLength(4);
      });
  });

  test('a lost node restarts the gang without counting against maxRestarts', () => {
    const g = given([...nodes, register(node('n5')), submit(four('a', { maxRestarts: 0 })), schedule()]);
    const lost = nodeOf(g.cluster, 'a', 0);
    g.when(lose(lost))
      .then((o) => {
        expect(o.aborts).toMatchObject([{ jobId: 'a', reason: { category: 'node-lost' } }]);
        expect(shardGet(o.state.jobs, 'a')).toMatchObject({ status: 'pending', attempt: 1 });
        expect(shardGet(o.state.jobs, 'a')!.restarts).toBeUndefined();
        expect(shardGet(o.state.nodes, lost)!.rendezvousPorts).toBeUndefined();
      })
      .when(schedule())
      .then((o) => expect(commitOf(o, 'a').attempt).toBe(1))
      // maxRestarts 0 counted nothing for the loss: the first failure now fails the job
      .when(done(nodeOf(g.cluster, 'a', 1), 'a', 1, false, { exitCode: 1, attempt: 1 }))
      .then((o) => expect(ofType(o, 'JobFinished')).toMatchObject([{ outcome: 'failed', attempts: 2 }]));
  });

  test('a late done from a stopped attempt is refused and never fails the next one', () => {
    const g = given([...nodes, submit(four('a', { maxRestarts: 2, backoffMs: 0 })), schedule()]);
    const first = nodeOf(g.cluster, 'a', 0);
    g.when(done(first, 'a', 0, false, { exitCode: 7, attempt: 0 }))
      .when(schedule())
      .then((o) => expect(commitOf(o, 'a').attempt).toBe(1))
      .when(done(nodeOf(g.cluster, 'a', 3), 'a', 3, false, { exitCode: 7, attempt: 0 }))
      .then((o) => {
        expect(o.events).toMatchObject([{ type: 'InputRejected', reason: { path: 'attempt', message: 'attempt 0 of job a is over; the job is on attempt 1' } }]);
        expect(shardGet(o.state.jobs, 'a')!.status).toBe('running');
      });
  });

  test('a restarting gang can be cancelled: it leaves the backoff table', () => {
    const g = given([...nodes, submit(four('a', { maxRestarts: 1 })), schedule()]);
    g.when(done(nodeOf(g.cluster, 'a', 0), 'a', 0, false, { exitCode: 1 }))
      .when(cancel('a'))
      .then((o) => {
        expect(shardGet(o.state.jobs, 'a')).toMatchObject({ status: 'cancelled' });
        expect(shardGet(o.state.jobs, 'a')!.notBefore).toBeUndefined();
        expect(nextDeadline(o.state)).toBeNull();
      });
  });

  test('bad done bodies are refused with the field named, and nothing is applied', () => {
    const g = given([...nodes, submit(four('a')), schedule()]);
    const on = nodeOf(g.cluster, 'a', 0);
    for (const [body, path] of [[{ exitCode: 1.5 }, 'exitCode'], [{ exitCode: '7' }, 'exitCode'], [{ signal: 9 }, 'signal'], [{ attempt: -1 }, 'attempt'], [{ attempt: 0.5 }, 'attempt'], [{ code: 1 }, 'code']] as const) {
      g.when({ kind: 'input', subject: `muster.in.node.${on}.done`, body: { jobId: 'a', member: 0, ok: false, ...body } })
        .then((o) => {
          expect(o.events).toMatchObject([{ type: 'InputRejected', reason: { category: 'invalid', path } }]);
          expect(shardGet(o.state.jobs, 'a')!.status).toBe('running');
        });
    }
  });
});

describe('old logs decide as v1.1 (DESIGN.md §15)', () => {
  test('on a log without ContractSet a commit has no rendezvous and a failing member just completes', () => {
    const cluster = new Cluster({ v1: true });
    for (const step of [...nodes, { kind: 'policy', spec: { reserveDepth: 1 } } as const, submit(four('a', { maxRestarts: 3 })), schedule()]) cluster.run(step);
    const commit = cluster.log.flat().find((e): e is GangCommitted => e.type === 'GangCommitted')!;
    expect(commit.rendezvous).toBeUndefined();
    expect(cluster.state.contract).toBeUndefined();
    const events = cluster.run(done(nodeOf(cluster, 'a', 1), 'a', 1, false, { exitCode: 7 })).flat();
    expect(events.map((e) => e.type)).toEqual(['TaskCompleted', 'AllocationReleased']);
    expect(shardGet(cluster.state.jobs, 'a')!.status).toBe('running');
    expect(JSON.stringify(cluster.state)).not.toMatch(/rendezvous|"attempt"|restarting/);
  });

  test('a new log starts with PolicySet and ContractSet 1.2 in one fact transaction', () => {
    const cluster = new Cluster();
    expect(cluster.log[0]!.map((e) => e.type)).toEqual(['PolicySet', 'ContractSet']);
    expect(cluster.state.contract).toBe('1.2');
  });
});

describe('explain tells the restart story (DESIGN.md §15)', () => {
  test('restarting until T after member M exited 7, then the attempt it runs, then failed after K attempts', () => {
    const g = given([...nodes, submit(four('a', { maxRestarts: 1, backoffMs: 5000 })), schedule()]);
    const failing = nodeOf(g.cluster, 'a', 1);
    g.when(done(failing, 'a', 1, false, { exitCode: 7 }))
      .then((o) => {
        const e = explain(o.state, 'a')!;
        expect(e).toMatchObject({ status: 'pending', attempt: 1, notBefore: 5000, lastFailure: { member: 1, node: failing, exitCode: 7, at: 0 } });
        expect(e.text).toContain(`restarting: not placed before 5000, after member 1 on ${failing} exited 7 at 0; next is attempt 1 (at most 2 attempts`);
      })
      .when(advance(5000))
      .when(schedule())
      .then((o) => {
        const e = explain(o.state, 'a')!;
        expect(e.rendezvous).toMatchObject({ port: 29500 });
        expect(e.text).toMatch(/; attempt 1; meets at \S+:29500$/);
      })
      .when(done(nodeOf(g.cluster, 'a', 0), 'a', 0, false, { signal: 'SIGSEGV', attempt: 1 }))
      .then((o) => expect(explain(o.state, 'a')!.text).toMatch(/; failed after 2 attempt\(s\): member 0 on \S+ was killed by SIGSEGV at 5000$/));
  });

  test('a job waiting for a rendezvous port says so', () => {
    const o = given([register({ ...node('n1'), ports: { from: 40000, to: 40000 } }), submit(job('a')), schedule(), submit(job('b'))]).when(schedule());
    expect(explain(o.state, 'b')!.text).toContain('no free rendezvous port on n1');
  });
});

describe('binds of an elastic growth carry the gang after it (DESIGN.md §15)', () => {
  test('the added members see the size after growth, every member, and the commit\'s rendezvous', () => {
    const elastic = job('e', { roles: [{ name: 'w', count: 4, minCount: 2, cpu: 4000, memoryMb: 1024 }] });
    const g = given([register({ ...node('n1', { cpu: 8000 }), address: 'h1.example' }), register(node('n2', { cpu: 8000 })), submit(job('busy', { tasks: 2, cpu: 4000, policy: 'spread' })), schedule(), submit(elastic), schedule()]);
    const commit = g.cluster.log.flat().find((e): e is GangCommitted => e.type === 'GangCommitted' && e.jobId === 'e')!;
    expect(commit.allocations.flatMap((a) => a.members)).toEqual([0, 1]);
    const o = g.when(complete('busy')).when(schedule());
    expect(o.resizes).toHaveLength(1);
    const tx = g.cluster.transactions.at(-1)!;
    const binds = decisionMessages(tx.seq, tx.tx, (id) => shardGet(o.state.jobs, id), (id) => shardGet(o.state.nodes, id))
      .filter((m) => m.subject.startsWith('muster.bind.')).map((m) => m.payload as BindMessage);
    expect(binds.flatMap((b) => b.parts.flatMap((p) => p.members)).sort()).toEqual([2, 3]);
    for (const bind of binds) {
      expect(bind.gang).toMatchObject({ attempt: 0, size: 4, rendezvous: commit.rendezvous });
      expect(bind.gang!.members.map((m) => m.member)).toEqual([0, 1, 2, 3]);
    }
  });
});
