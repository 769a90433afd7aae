import { describe, expect, it } from 'vitest';
import { WorkloadRecorder, runScenario } from '@muster/core';
import type { Step } from '@muster/core';

// The workload a log gives (`muster simulate --from-log`), from logs written by the simulator's
// steps: observed run times, requeues after a node loss, stops, and jobs whose run did not end.

const slots = (id: string, n: number) => ({ id, capacity: { cpu: 1_000_000, memoryMb: 1_000_000, slots: n }, gpus: [] });
const job = (id: string, tasks: number, more: Record<string, unknown> = {}) => ({ id, identity: { user: 'u' }, tasks, resources: { cpu: 1, memoryMb: 1 }, ...more });

function recorded(steps: Step[], nodes: unknown[] = [slots('n1', 4), slots('n2', 4)]) {
  const run = runScenario({ nodes, steps });
  if (!run.ok) throw new Error(run.error);
  const recorder = new WorkloadRecorder();
  for (const t of run.transactions) recorder.add(t);
  const { scenario, notes } = recorder.workload();
  return { scenario, notes, entries: scenario.workload.map((e) => [(e.submit as { id: string }).id, e.at, e.runMs]) };
}

describe('WorkloadRecorder', () => {
  it('takes arrivals from the first one, run times from commit to the last member, and the policy in force', () => {
    const r = recorded([
      { advanceMs: 1000 }, { submit: job('a', 2) }, { schedule: {} },
      { advanceMs: 500 }, { submit: job('b', 1) }, { policy: { reserveDepth: 4 } }, { schedule: {} },
      { advanceMs: 2000 }, { done: { jobId: 'a', member: 0 } }, { schedule: {} },
      { advanceMs: 3000 }, { done: { jobId: 'a', member: 1 } }, { complete: { jobId: 'b' } }, { schedule: {} },
    ]);
    expect(r.entries).toEqual([['a', 0, 5500], ['b', 500, 5000]]);
    expect(r.scenario.policy).toEqual({ reserveDepth: 4, assumedRuntimeMs: 86_400_000 });
    expect(r.scenario.nodes.map((n) => (n as { id: string }).id)).toEqual(['n1', 'n2']);
    expect(r.notes).toEqual([]);
  });

  it('counts the run after a requeue, a stop at the limit and a cancel while running; hints or notes for runs that did not end', () => {
    const r = recorded([
      { submit: job('lost', 4, { placement: { policy: 'same-node' } }) }, { submit: job('limited', 1, { runtimeLimitMs: 700 }) },
      { submit: job('cancelled', 1) }, { schedule: {} },
      { advanceMs: 100 }, { nodeLost: { nodeId: 'n1' } }, { node: slots('n3', 4) }, { schedule: {} },
      { advanceMs: 900 }, { cancel: { jobId: 'cancelled' } }, { schedule: {} },
      { advanceMs: 200 }, { complete: { jobId: 'lost' } },
      { submit: job('hinted', 9, { runtimeMs: 1234 }) }, { submit: job('never', 9) }, { submit: job('still', 1) }, { schedule: {} },
    ]);
    // lost ran again from 100 (its second commit) to 1200; limited was stopped at its first session at or after 700 (1000)
    expect(r.entries).toEqual([['lost', 0, 1100], ['limited', 0, 1000], ['cancelled', 0, 1000], ['hinted', 1200, 1234]]);
    expect(r.notes).toEqual([
      'job hinted never ran: it runs its runtimeMs hint, 1234 ms',
      'job never never ran and gives no runtimeMs hint: left out',
      'job still was still running at the end of the log and gives no runtimeMs hint: left out',
    ]);
    expect(r.scenario.nodes.map((n) => (n as { id: string }).id)).toEqual(['n1', 'n2', 'n3']);
    // what it took runs as a workload
    const rerun = runScenario(r.scenario);
    expect(rerun.ok && JSON.parse(rerun.lines.at(-1)!)).toMatchObject({ type: 'Summary' });
  });
  it('takes the queues in force at the log\'s end, each after its parent, and the recorded workload runs under them', () => {
    const r = recorded([
      { queue: { name: 'child', parent: 'root' } },
      { queue: { name: 'root' } }, { queue: { name: 'child', parent: 'root', weight: 2 } },
      { queue: { name: 'b-team', guaranteed: { cpu: 1 } } },
      { queue: { name: 'child', parent: 'b-team', weight: 3 } },
      { submit: job('c', 1, { identity: { user: 'u', queue: 'child' } }) }, { schedule: {} }, { advanceMs: 10 }, { complete: { jobId: 'c' } },
    ]);
    // the first set of child was refused (no parent yet); its last spec moved it under b-team, defined after root
    expect(r.scenario.queues?.map((q) => [q.name, q.parent ?? null, q.weight])).toEqual([['root', null, 1], ['b-team', null, 1], ['child', 'b-team', 3]]);
    const rerun = runScenario(r.scenario);
    expect(rerun.ok && rerun.lines.some((l) => l.includes('"GangCommitted"') && l.includes('"c"'))).toBe(true);
  });
});
