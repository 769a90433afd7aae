import { describe, expect, test } from 'vitest';
import { JobQueue } from './jobQueue.ts';
import type { QueuedJob } from './jobQueue.ts';

const job = (id: string, user: string, submitIndex: number, priority = 0, queue = 'q'): QueuedJob => ({ id, user, queue, submitIndex, priority });

function drain(queue: JobQueue, onEach: (j: QueuedJob) => void = () => {}): string[] {
  const out: string[] = [];
  for (let j = queue.next(); j !== null; j = queue.next()) {
    out.push(j.id);
    onEach(j);
  }
  return out;
}

describe('JobQueue', () => {
  test('priority first, then the lower share, then submission order, then id', () => {
    const shares: Record<string, number> = { 'user:rich': 0.5, 'user:poor': 0.1 };
    const q = new JobQueue(
      [job('r1', 'rich', 0), job('p2', 'poor', 3), job('p1', 'poor', 1), job('vip', 'rich', 9, 5), job('b', 'poor', 1)],
      (kind, name) => shares[`${kind}:${name}`] ?? 0,
    );
    expect(drain(q)).toEqual(['vip', 'b', 'p1', 'p2', 'r1']);
  });

  test('shares re-read lazily after each turn reorder users as they grow', () => {
    const shares: Record<string, number> = {};
    const q = new JobQueue(
      [job('a1', 'a', 0), job('a2', 'a', 1), job('a3', 'a', 2), job('b1', 'b', 3), job('b2', 'b', 4)],
      (kind, name) => shares[`${kind}:${name}`] ?? 0,
    );
    // every job taken raises its user's share by 0.1 (as a commit would)
    const order = drain(q, (j) => {
      shares[`user:${j.user}`] = (shares[`user:${j.user}`] ?? 0) + 0.1;
    });
    expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
  });

  test('the queue share breaks a tie between users', () => {
    const shares: Record<string, number> = { 'queue:busy': 0.4 };
    const q = new JobQueue([job('x', 'u1', 0, 0, 'busy'), job('y', 'u2', 1, 0, 'idle')], (kind, name) => shares[`${kind}:${name}`] ?? 0);
    expect(drain(q)).toEqual(['y', 'x']);
  });
});
