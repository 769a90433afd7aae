import { describe, expect, it } from 'vitest';
import { runScenario, runScenarioText, swfWorkload } from '@muster/core';

// `muster simulate --swf` (docs/simulate.md, "Real traces"): a Standard Workload Format trace becomes
// the workload an operator would have written by hand, decided by the same core.

const TRACE = `; Version: 2.2
; MaxProcs: 4
; a comment line
1 0 -1 100 2 -1 -1 2 300 -1 1 3 -1 -1 1 1 -1 -1
2 10 -1 50 -1 -1 -1 4 60 -1 1 4 -1 -1 1 1 -1 -1
3 10 -1 -1 1 -1 -1 1 60 -1 0 4 -1 -1 1 1 -1 -1
4 20 -1 30 1 -1 -1 -1 -1 -1 1 5 -1 -1 1 1 -1 -1

5 25 -1 0 3 -1 -1 3 120 -1 1 5 -1 -1 1 1 -1 -1
`;

type Line = { type: string } & Record<string, unknown>;
const parse = (lines: string[]): Line[] => lines.map((l) => JSON.parse(l) as Line);

/** The workload of TRACE, written by hand as docs/simulate.md says --swf makes it (four one-slot hosts). */
function byHand(limit: (run: number, requested: number) => number): unknown {
  const job = (id: string, tasks: number, run: number, requested: number) => ({ id, identity: { user: 'swf' }, tasks, resources: { cpu: 1000, memoryMb: 1024 }, runtimeLimitMs: limit(run, requested) * 1000 + 1000 });
  return {
    nodes: [1, 2, 3, 4].map((i) => ({ id: `h${i}`, capacity: { cpu: 1000, memoryMb: 1024, slots: 1 }, gpus: [] })),
    workload: [
      { at: 0, submit: job('j1', 2, 100, 300), runMs: 100_000 },
      { at: 10_000, submit: job('j2', 4, 50, 60), runMs: 50_000 },
      { at: 20_000, submit: job('j4', 1, 30, 30), runMs: 30_000 },
      { at: 25_000, submit: job('j5', 3, 0, 120), runMs: 0 },
    ],
  };
}

function runTrace(text: string, options: Parameters<typeof swfWorkload>[1] = {}) {
  const trace = swfWorkload(text, options);
  if (!trace.ok) throw new Error(trace.error);
  const run = runScenario(trace.scenario);
  if (!run.ok) throw new Error(run.error);
  return { notes: trace.notes, lines: parse(run.lines) };
}

describe('a Standard Workload Format trace as a workload', () => {
  it('decides exactly as the same workload written by hand, with the actual or the requested time as the limit', () => {
    for (const [estimate, limit] of [['actual', (run: number) => run], ['requested', (_: number, requested: number) => requested]] as const) {
      const { lines, notes } = runTrace(TRACE, { estimate });
      const hand = runScenarioText(JSON.stringify(byHand(limit)));
      if (!hand.ok) throw new Error(hand.error);
      expect(lines).toEqual(parse(hand.lines));
      expect(notes).toContain('1 job(s) with no run time (field 4 is -1) left out');
      expect(lines.at(-1)).toMatchObject({ type: 'Summary', committed: 4, jobs: { succeeded: 4 }, sizes: { 1: 1, 2: 1, '3-4': 2 } });
    }
    // the two limits are not the same workload: j1's limit is 101 s or 301 s
    expect(runTrace(TRACE).lines.at(-1)!.stateHash).not.toBe(runTrace(TRACE, { estimate: 'requested' }).lines.at(-1)!.stateHash);
  });

  it('builds the hosts of --hosts and --slots-per-host, and keeps the first --limit jobs', () => {
    const trace = swfWorkload(TRACE, { hosts: 3, slotsPerHost: 2, limit: 2 });
    expect(trace.ok && trace.scenario.nodes).toEqual([1, 2, 3].map((i) => ({ id: `h${i}`, capacity: { cpu: 2000, memoryMb: 2048, slots: 2 }, gpus: [] })));
    expect(trace.ok && trace.scenario.workload.map((e) => (e.submit as { id: string }).id)).toEqual(['j1', 'j2']);
    const wide = swfWorkload(TRACE, { hosts: 1 });
    expect(wide.ok && wide.notes).toContain('3 job(s) ask for more than the 1 slots of 1 host(s): they cannot run');
  });

  it('names the line and field of what is not SWF, and needs a cluster size', () => {
    const errors: [string, RegExp][] = [
      [`1 0 -1 100 2 -1 -1 2 300`, /^line 1: a job has 18 fields, this line has 9$/],
      [`; MaxProcs: 4\n1 0 -1 1x0 2 -1 -1 2 300 -1 1 3 -1 -1 1 1 -1 -1`, /^line 2, field 4 \(run time\): not a number: "1x0"$/],
      [`1 0 -1 100 2.5 -1 -1 2 300 -1 1 3 -1 -1 1 1 -1 -1`, /^line 1, field 5 \(allocated processors\): must be an integer ≥ -1/],
      [`2 9 -1 1 1 -1 -1 1 1 -1 1 3 -1 -1 1 1 -1 -1\n3 5 -1 1 1 -1 -1 1 1 -1 1 3 -1 -1 1 1 -1 -1`, /^line 2, field 2 \(submit time\): 5 is before the job above it \(9\)/],
      [`2 9 -1 1 1 -1 -1 1 1 -1 1 3 -1 -1 1 1 -1 -1\n2 9 -1 1 1 -1 -1 1 1 -1 1 3 -1 -1 1 1 -1 -1`, /^line 2, field 1 \(job number\): job 2 is listed twice$/],
      [`2 9 -1 1 1 -1 -1 1 1 -1 1 3 -1 -1 1 1 -1 -1`, /give --hosts/],
    ];
    for (const [text, error] of errors) {
      const trace = swfWorkload(text, { ...(text.startsWith('2 9') && !error.source.includes('hosts') ? { hosts: 1 } : {}) });
      expect(trace.ok ? 'ok' : trace.error).toMatch(error);
    }
  });
});
