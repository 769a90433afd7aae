import { describe, expect, test } from 'vitest';
import { canonicalJson, fold, initialState, isRetired, retireProblem, retirement, shardGet, stateHash } from '@muster/core';
import type { State } from '@muster/core';
import { job, slotNode } from '@muster/core/testing';
import { advance, cancel, complete, given, register, retire, schedule, submit } from '@muster/core/testing';
import { invariantViolations } from '@muster/core/testing';

// Retiring finished jobs (JobsRetired): the state stops keeping them in full after a retention
// time, while their ids stay known and the log keeps their story.

describe('retiring finished jobs', () => {
  test('a finished job is retired once its retention has passed, not before', () => {
    given([register(slotNode('n1', 2)), submit(job('a')), schedule(), complete('a')])
      .when(retire(60_000))
      .then((o) => expect(o.events).toEqual([]))
      .when(advance(60_000))
      .when(retire(60_000))
      .then((o) => {
        expect(o.events).toEqual([{ type: 'JobsRetired', at: 60_000, retainMs: 60_000, jobIds: ['a'] }]);
        expect(shardGet(o.state.jobs, 'a')).toBeUndefined();
        expect(shardGet(o.state.retired!, 'a')).toEqual({ spec: { id: 'a' }, status: 'succeeded', finishedAt: 0 });
        expect(invariantViolations(o.state)).toEqual([]);
      });
  });

  test('running and pending jobs are never retired; cancelled ones are', () => {
    given([register(slotNode('n1', 1)), submit(job('run')), submit(job('wait')), submit(job('gone')), schedule(), cancel('gone')])
      .when(retire(0))
      .then((o) => {
        expect(o.events).toEqual([{ type: 'JobsRetired', at: 0, retainMs: 0, jobIds: ['gone'] }]);
        expect(shardGet(o.state.jobs, 'run')?.status).toBe('running');
        expect(shardGet(o.state.jobs, 'wait')?.status).toBe('pending');
      });
  });

  test('a retired id is still a duplicate, and reports about it are rejected with a clear reason', () => {
    given([register(slotNode('n1', 1)), submit(job('a')), schedule(), complete('a'), retire(0)])
      .when(submit(job('a')))
      .then((o) => {
        expect(o.events).toMatchObject([{ type: 'JobRejected', jobId: 'a', reason: { category: 'duplicate', path: 'id' } }]);
        expect(isRetired(o.state, 'a')).toBe(true);
      })
      .when(cancel('a'))
      .then((o) => expect(o.events).toMatchObject([{ type: 'InputRejected', reason: { path: 'jobId', message: 'job a finished and was retired' } }]));
  });

  test('the fold ignores an id that may not be retired (a running job stays whole)', () => {
    const { cluster } = given([register(slotNode('n1', 1)), submit(job('run')), schedule()]);
    const before = cluster.state;
    expect(retireProblem(before, 'run', 10, 0)).toBe('job run is running, not finished');
    const after = fold(before, [{ type: 'JobsRetired', at: 10, retainMs: 0, jobIds: ['run', 'nobody'] }]);
    expect(shardGet(after.jobs, 'run')).toEqual(shardGet(before.jobs, 'run'));
    expect(after.retired).toBeUndefined();
  });

  test('a log without JobsRetired hashes as before: the retired table is absent until it is used', () => {
    const s: State = initialState();
    expect('retired' in s).toBe(false);
    expect(canonicalJson(s)).not.toContain('retired');
    const { cluster } = given([register(slotNode('n1', 1)), submit(job('a')), schedule(), complete('a')]);
    expect(canonicalJson(cluster.state)).not.toContain('retired');
    expect(retirement(cluster.state, 5, 10, 100)).toBeNull();
    expect(stateHash(cluster.state)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('the oldest finished first, at most the limit', () => {
    const { cluster } = given([
      register(slotNode('n1', 3)),
      submit(job('b')),
      submit(job('a')),
      submit(job('c')),
      schedule(),
      complete('c'),
      advance(10),
      complete('b'),
      complete('a'),
    ]);
    expect(retirement(cluster.state, 100, 0, 2)?.jobIds).toEqual(['c', 'a']);
  });
});
