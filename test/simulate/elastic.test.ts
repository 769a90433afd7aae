// examples/scenarios/elastic.json (docs/simulate.md, DESIGN.md §13) through `muster simulate`, as a
// user runs it: an elastic gang (16 members, minCount 8) submitted on a busy cluster starts at its
// minimum, grows as the busy jobs finish, is shrunk (not stopped) by a higher-priority job of its
// queue, grows back when that one is done, and finishes with every member it added.
import { describe, expect, it } from 'vitest';
import type { GangCommitted, GangResized } from '@muster/core';
import { runMuster } from '../cli/runMuster.ts';

const SCENARIO = new URL('../../examples/scenarios/elastic.json', import.meta.url).pathname;

type Line = { type: string; jobId?: string } & Record<string, unknown>;

const sizeOf = (e: GangCommitted | GangResized): number => e.allocations.reduce((n, a) => n + a.members.length, 0);
const membersOf = (e: GangCommitted | GangResized): number[] => e.allocations.flatMap((a) => a.members).sort((a, b) => a - b);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('the elastic example scenario, through muster simulate', () => {
  it('starts at its minimum, grows as jobs finish, shrinks under preemption instead of stopping, and its added members finish with it', async () => {
    const run = await runMuster(['simulate', SCENARIO]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as Line);
    const of = <T>(type: string, jobId: string): T[] => lines.filter((l) => l.type === type && l.jobId === jobId) as unknown as T[];

    // busy-1 and busy-2 hold 8 of the 16 GPUs: train commits at its minimum, 8 members, numbered 0-7
    const [commit] = of<GangCommitted>('GangCommitted', 'train');
    expect(commit).toMatchObject({ at: 1000 });
    expect(membersOf(commit!)).toEqual(range(0, 8));

    const resizes = of<GangResized>('GangResized', 'train');
    expect(resizes.map((r) => ({ at: r.at, members: r.members, by: r.by }))).toEqual([
      // busy-1 ends at 60 s and busy-2 at 90 s: each time train grows by the 4 GPUs freed
      { at: 60_000, members: 12, by: undefined },
      { at: 90_000, members: 16, by: undefined },
      // urgent (priority 10, same queue, withinQueue lower-priority) takes 4 members, not the gang
      { at: 120_000, members: 12, by: 'urgent' },
      // and when urgent is done, train grows back to full size with the same member numbers
      { at: 180_000, members: 16, by: undefined },
    ]);
    for (const r of resizes) expect(sizeOf(r)).toBe(r.members);
    expect(membersOf(resizes[2]!)).toEqual(range(0, 12));
    expect(membersOf(resizes[3]!)).toEqual(range(0, 16));
    // train was never stopped: one commit, no abort
    expect(of('GangCommitted', 'train')).toHaveLength(1);
    expect(of('GangAborted', 'train')).toHaveLength(0);
    expect(of<GangCommitted>('GangCommitted', 'urgent')[0]).toMatchObject({ at: 120_000 });

    // every member, the added ones too, finished at the job's end: it succeeded 300 s after its commit
    expect(of('JobStats', 'train')[0]).toMatchObject({ startedAt: 1000, endedAt: 301_000, outcome: 'succeeded' });
    const summary = lines.at(-1)!;
    expect(summary).toMatchObject({ type: 'Summary', jobs: { succeeded: 4 } });
    // the GPUs were busy all along but the first second (8 of 16 held): the grown members count
    // as held while they run, and nothing is counted after they finish
    expect((summary.utilisation as { gpus: number }).gpus).toBeCloseTo((8 * 1000 + 16 * 300_000) / (16 * 301_000), 4);
  });
});
