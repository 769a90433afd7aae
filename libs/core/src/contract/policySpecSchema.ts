import { z } from 'zod';

/** Most reservations one session may make. */
export const MAX_RESERVE_DEPTH = 1024;

/**
 * The PolicySpec an operator publishes on `muster.in.policy` (DESIGN.md §11): every field optional;
 * the fields it names replace the ones in force, the rest stay.
 */
export const policySpecSchema = z.strictObject({
  reserveDepth: z.int().min(0).max(MAX_RESERVE_DEPTH).optional()
    .meta({ description: 'How many of the first blocked jobs in a session get a reservation (EASY backfill: 1; 0 turns reservations off).' }),
  assumedRuntimeMs: z.int().min(1).optional()
    .meta({ description: 'How long a running gang without a runtimeLimitMs is assumed to run, for planning, in ms.' }),
  minRuntimeBeforePreemptionMs: z.int().min(0).optional()
    .meta({ description: 'A gang that started less than this long ago (ms) is not a victim of preemption; 0 (the default): any running gang may be.' }),
  fairShareHalfLifeMs: z.int().min(1).optional()
    .meta({ description: 'Sibling queues are ordered by usage decayed with this half-life (ms) instead of their current use.' }),
}).meta({ description: 'Scheduling policy: the fields given replace the ones in force.' });
