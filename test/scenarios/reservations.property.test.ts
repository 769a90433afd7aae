import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { TurnContext, nextDeadline, shardEntriesSorted, shardGet, turn } from '@muster/core';
import type { JobState, State } from '@muster/core';
import { alternativesJob, job, slotNode } from '@muster/core/testing';
import { invariantViolations, releaseViolations } from '@muster/core/testing';
import { Cluster, advance, cancel, cancelPicked, finishPicked, policy, register, schedule, submit } from '@muster/core/testing';

// DESIGN.md §11: no backfilled job ever delays a reservation. Checked against the plan itself:
// when every gang has a runtime limit (so the expected ends the plan assumes are the ends the
// sessions enforce), a state with a reserved job, left alone (no new input, only the sessions its
// deadlines make run), commits that job at or before the start its reservation promised, and §7's
// invariants hold on the way. One user, so the order of jobs does not change as gangs end (a DRF
// share that falls can put another job ahead of a reserved one: a reservation is protected from
// backfill, not from jobs ahead of it in the order).

type Command =
  | { kind: 'submit'; tasks: number; limitMs: number; priority: number; user: string; or?: number }
  | { kind: 'finish'; pick: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'advance'; ms: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('submit' as const), tasks: fc.integer({ min: 1, max: 10 }), limitMs: fc.constantFrom(1_000, 3_000, 7_000, 20_000), priority: fc.constantFrom(0, 0, 1, 5), user: fc.constant('a') }) },
  // a job with alternatives (DESIGN.md §13): `tasks` members, or `or`; reserved at the earliest start over both
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('submit' as const), tasks: fc.integer({ min: 1, max: 16 }), limitMs: fc.constantFrom(1_000, 3_000, 7_000, 20_000), priority: fc.constantFrom(0, 1, 5), user: fc.constant('a'), or: fc.integer({ min: 1, max: 10 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(200, 1_000, 2_500) }) },
);

function jobs(state: State): JobState[] {
  return shardEntriesSorted(state.jobs).map(([, j]) => j);
}

/** Lets a state run on its own (sessions at its deadlines only) until `until`; returns the state then. */
function leftAlone(state: State, until: number): State {
  const context = new TurnContext();
  let s = state;
  for (let guard = 0; guard < 1_000; guard++) {
    const t = nextDeadline(s);
    if (t === null || t > until) break;
    s = turn(context, s, null, [{ session: true }], { term: 1, leader: 'check', at: t }).state;
    expect(invariantViolations(s)).toEqual([]);
  }
  return s;
}

describe('reservations hold: no backfill delays the reserved start (DESIGN.md §11)', () => {
  test('a reserved job left alone commits by its promised start; §7 holds throughout', () => {
    // reservations of jobs with alternatives checked, over the runs (the generator must reach them)
    let alternativesChecked = 0;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 2, max: 8 }), { minLength: 1, maxLength: 4 }), fc.array(commandArb, { minLength: 5, maxLength: 40 }), (slots, commands) => {
        const c = new Cluster();
        c.run(policy({ reserveDepth: 1 }));
        slots.forEach((n, i) => c.run(register(slotNode(`h${i}`, n))));
        let submitted = 0;
        let checked = 0;
        for (const cmd of commands) {
          if (cmd.kind === 'submit' && cmd.or !== undefined) {
            c.run(submit({ ...alternativesJob(`j${submitted++}`, [{ tasks: cmd.tasks }, { tasks: cmd.or }], { priority: cmd.priority, user: cmd.user }), runtimeLimitMs: cmd.limitMs }));
          } else if (cmd.kind === 'submit') c.run(submit({ ...job(`j${submitted++}`, { tasks: cmd.tasks, priority: cmd.priority, user: cmd.user }), runtimeLimitMs: cmd.limitMs }));
          else if (cmd.kind === 'finish') finishPicked(c, cmd.pick);
          else if (cmd.kind === 'cancel') cancelPicked(c, cmd.pick);
          else c.run(advance(cmd.ms));
          const written = c.run(schedule()).flat();
          expect(invariantViolations(c.state)).toEqual([]);
          // a reservation never promises a start before the session that made it
          for (const e of written) if (e.type === 'GangReserved') expect(e.startAt).toBeGreaterThanOrEqual(e.at);
          const reserved = jobs(c.state).filter((j) => j.reservation !== undefined);
          expect(reserved.length).toBeLessThanOrEqual(1);
          for (const r of reserved) {
            const startAt = r.reservation!.startAt;
            expect(startAt).toBeGreaterThanOrEqual(c.at);
            const later = leftAlone(c.state, startAt);
            expect(shardGet(later.jobs, r.spec.id)?.status, `job ${r.spec.id} reserved for ${startAt} at ${c.at}`).not.toBe('pending');
            checked++;
            if (r.spec.alternatives !== undefined) alternativesChecked++;
          }
        }
        // exact release still holds when everything ends
        for (const j of jobs(c.state)) if (j.status === 'running' || j.status === 'pending') c.run(cancel(j.spec.id));
        expect(releaseViolations(c.state)).toEqual([]);
        return checked >= 0;
      }),
      { numRuns: 150 },
    );
    expect(alternativesChecked).toBeGreaterThan(0);
  });
});
