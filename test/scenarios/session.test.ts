import { describe, expect, test } from 'vitest';
import { needsSession, nextDeadline } from '@muster/core';
import { explain } from '@muster/core';
import { SESSION_LIMITS, TransactionCutter, runSession } from '@muster/core';
import { foldTransactions, makeTransaction, stateHash } from '@muster/core';
import { shardGet } from '@muster/core';
import { job, node, slotNode } from '@muster/core/testing';
import { advance, cancel, close, complete, done, drain, given, lose, register, schedule, submit } from '@muster/core/testing';
import { invariantViolations, releaseViolations } from '@muster/core/testing';

describe('order', () => {
  test('higher priority first, whatever the submission order', () => {
    given([register(slotNode('n1', 1)), submit(job('low', { priority: 0 })), submit(job('high', { priority: 5 }))])
      .when(schedule())
      .then((o) => {
        expect(o.commits.map((c) => c.jobId)).toEqual(['high']);
        expect(o.aborts.map((a) => a.jobId)).toEqual(['low']);
      });
  });

  test('the user with the lower dominant share first (DRF)', () => {
    given([
      register(slotNode('n1', 2)),
      submit(job('a0', { user: 'alice' })),
    ])
      .when(schedule())
      .when(submit(job('a1', { user: 'alice' })))
      .when(submit(job('b1', { user: 'bob' })))
      .when(schedule())
      .then((o) => {
        // alice already holds a slot; bob holds nothing, so bob's later job goes first
        expect(o.commits.map((c) => c.jobId)).toEqual(['b1']);
      });
  });

  test('shares are recomputed after each commit in the session', () => {
    given([
      register(slotNode('n1', 4)),
      submit(job('a1', { user: 'alice' })),
      submit(job('a2', { user: 'alice' })),
      submit(job('b1', { user: 'bob' })),
      submit(job('b2', { user: 'bob' })),
    ])
      .when(schedule())
      .then((o) => {
        // FIFO would be a1 a2 b1 b2; DRF interleaves users as their shares grow
        expect(o.commits.map((c) => c.jobId)).toEqual(['a1', 'b1', 'a2', 'b2']);
      });
  });

  test('the queue\'s share breaks a tie between users', () => {
    given([
      register(slotNode('n1', 2)),
      submit(job('q0', { user: 'carol', queue: 'busy' })),
    ])
      .when(schedule())
      .when(complete('q0'))
      .when(submit(job('x1', { user: 'dave', queue: 'busy', priority: 1 })))
      .when(schedule())
      .when(submit(job('busy1', { user: 'erin', queue: 'busy' })))
      .when(submit(job('idle1', { user: 'frank', queue: 'idle' })))
      .when(schedule())
      .then((o) => {
        // erin and frank hold nothing; queue busy holds x1's slot, so frank (queue idle) goes first
        expect(o.commits.map((c) => c.jobId)).toEqual(['idle1']);
      });
  });
});

describe('sessions', () => {
  test('an idle cluster writes nothing', () => {
    const g = given([register(slotNode('n1', 1)), submit(job('j1')), submit(job('j2'))]);
    g.when(schedule()).then((o) => expect(o.commits).toHaveLength(1));
    expect(needsSession(g.cluster.state, 1_000_000)).toBe(false);
    expect(g.when(schedule(1_000_000)).parts).toEqual([]);
  });

  test('a new job is tried alone; jobs whose outcome cannot have changed are not retried', () => {
    given([register(slotNode('n1', 1)), submit(job('fill')), submit(job('waiting', { tasks: 2 }))])
      .when(schedule())
      .when(submit(job('new', { tasks: 1, user: 'bob' })))
      .when(schedule())
      .then((o) => {
        expect(o.cluster.lastStats).toMatchObject({ attempted: 1, notRetried: 1 });
        expect(o.aborts.map((a) => a.jobId)).toEqual(['new']);
      });
  });

  test('a timeout aborts the job with final: true at the first session at or after its deadline', () => {
    const g = given([register(slotNode('n1', 1)), submit(job('fill')), submit(job('t', { timeoutMs: 1000 }))]);
    g.when(schedule()).then((o) => expect(o.aborts.map((a) => [a.jobId, a.final])).toEqual([['t', false]]));
    expect(nextDeadline(g.cluster.state)).toBe(1000);
    expect(needsSession(g.cluster.state, 999)).toBe(false);
    expect(needsSession(g.cluster.state, 1000)).toBe(true);
    g.when(advance(1500)).when(schedule()).then((o) => {
      expect(o.aborts).toHaveLength(1);
      expect(o.aborts[0]).toMatchObject({ jobId: 't', final: true, at: 1500, reason: { category: 'timeout' } });
      expect(shardGet(o.state.jobs, 't')!.status).toBe('timedout');
      expect(nextDeadline(o.state)).toBeNull();
      expect(needsSession(o.state, 5000)).toBe(false);
    });
  });

  test('a session splits into parts of about 1000 events, each gang in one part', () => {
    const steps = [register(slotNode('n1', 10_000))];
    for (let i = 0; i < 300; i++) steps.push(submit(job(`j${i}`, { tasks: 4, cpu: 1, memoryMb: 1 })));
    const g = given(steps);
    const { parts } = runSession(g.cluster.state, 0);
    // 300 gangs × 6 events (1 debit, 4 binds, 1 commit) + SessionStarted
    expect(parts.flat()).toHaveLength(1801);
    expect(parts[0]![0]).toMatchObject({ type: 'SessionStarted', session: 1 });
    for (const part of parts) {
      expect(part.length).toBeLessThan(1000 + 6);
      expect(part.at(-1)!.type).toBe('GangCommitted');
    }
    expect(parts.length).toBe(2);
  });

  test('a part closes before the gang that would bring it past its byte limit, and the state is the fold of the parts', () => {
    // big gangs (64 members: 66 events, about 8 KB each) on a limit of 20 KB: a part holds two
    const steps = [register(slotNode('n1', 10_000))];
    for (let i = 0; i < 10; i++) steps.push(submit(job(`j${i}`, { tasks: 64, cpu: 1, memoryMb: 1 })));
    const g = given(steps);
    const cutter = new TransactionCutter({ ...SESSION_LIMITS, bytes: 20_000 }, { at: 0, term: g.cluster.state.term });
    const { parts, state } = runSession(g.cluster.state, 0, { cutter });
    expect(parts.length).toBeGreaterThan(3);
    for (const part of parts) {
      expect(JSON.stringify(part).length).toBeLessThanOrEqual(20_000);
      expect(part.at(-1)!.type).toBe('GangCommitted');
    }
    expect(parts.flat().filter((e) => e.type === 'GangCommitted')).toHaveLength(10);
    const folded = foldTransactions(g.cluster.state, parts.map((events, i) => ({ seq: g.cluster.state.seq + i + 1, tx: makeTransaction(null, { kind: 'session', at: 0, term: g.cluster.state.term, leader: 'test', session: 1, part: i + 1, parts: parts.length }, events) })));
    expect(stateHash(folded)).toBe(stateHash(state));
  });
});

describe('lifecycle', () => {
  test('completion releases exactly what was debited, GPU ids included (minInstances 0)', () => {
    given([register(node('n1', { gpus: 4 })), submit(job('j', { tasks: 2, gpus: 2 }))])
      .when(schedule())
      .when(done('n1', 'j', 0))
      .then((o) => {
        expect(shardGet(o.state.nodes, 'n1')!.gpusUsed).toEqual([2, 3]);
        expect(invariantViolations(o.state)).toEqual([]);
      })
      .when(done('n1', 'j', 1))
      .then((o) => {
        expect(shardGet(o.state.jobs, 'j')!.status).toBe('succeeded');
        expect(releaseViolations(o.state)).toEqual([]);
      });
  });

  test('a kept-warm gang (minInstances = size) holds its hosts until closed', () => {
    given([register(slotNode('n1', 2)), submit(job('warm', { tasks: 2, minInstances: 2 })), submit(job('next', { tasks: 2 }))])
      .when(schedule())
      .when(complete('warm'))
      .then((o) => {
        expect(shardGet(o.state.nodes, 'n1')!.used.slots).toBe(2);
        expect(needsSession(o.state, 0)).toBe(false);
      })
      .when(close('warm'))
      .when(schedule())
      .then((o) => {
        expect(o.commits.map((c) => c.jobId)).toEqual(['next']);
        expect(invariantViolations(o.state)).toEqual([]);
      });
  });

  test('losing a node releases and requeues the whole gang; it is placed again elsewhere', () => {
    given([register(slotNode('n1', 2)), register(slotNode('n2', 2)), register(slotNode('n3', 2)), submit(job('g', { tasks: 4 }))])
      .when(schedule())
      .then((o) => expect(Object.keys(o.commits[0]!.allocations.map((a) => a.node))).toHaveLength(2))
      .when(lose('n1'))
      .then((o) => {
        const g = shardGet(o.state.jobs, 'g')!;
        expect(g.status).toBe('pending');
        expect(g.pendReason?.category).toBe('node-lost');
        expect(g.members.every((m) => m === null)).toBe(true);
        expect(shardGet(o.state.nodes, 'n2')!.used.slots).toBe(0);
        expect(invariantViolations(o.state)).toEqual([]);
      })
      .when(schedule())
      .then((o) => {
        expect(o.commits[0]!.allocations.map((a) => a.node)).toEqual(['n2', 'n3']);
        expect(invariantViolations(o.state)).toEqual([]);
      });
  });

  test('cancel releases a running gang; a drained node takes nothing new', () => {
    given([register(slotNode('n1', 2)), register(slotNode('n2', 2)), submit(job('a', { tasks: 2 }))])
      .when(schedule())
      .when(drain('n2'))
      .when(cancel('a'))
      .when(submit(job('b', { tasks: 4 })))
      .when(schedule())
      .then((o) => {
        expect(o.aborts[0]!.reason).toMatchObject({ category: 'placement-unsatisfiable', hosts: { drained: 1 } });
        expect(releaseViolations(o.state)).toEqual([]);
      });
  });
});

describe('explain', () => {
  test('answers from the state alone with a fresh count of hosts per reason', () => {
    const g = given([
      register(node('g1', { gpus: 2 })),
      register(node('c1', { labels: { zone: 'b' } })),
      register(node('lost1')),
      submit(job('fill', { tasks: 2, gpus: 1 })),
    ]);
    g.when(schedule()).when(lose('lost1')).when(submit(job('j', { tasks: 1, gpus: 1 }))).when(schedule());
    const e = explain(g.cluster.state, 'j')!;
    expect(e).toMatchObject({
      jobId: 'j',
      status: 'pending',
      reason: { category: 'insufficient-resources' },
      hosts: { 'node-lost': 1, 'insufficient-gpu': 2 },
      fit: 0,
      eligible: 2,
    });
    expect(e.text).toContain('pending');
    expect(JSON.parse(JSON.stringify(e))).toEqual(e);
    expect(explain(g.cluster.state, 'nope')).toBeNull();
    expect(explain(g.cluster.state, 'fill')!.status).toBe('running');
  });
});
