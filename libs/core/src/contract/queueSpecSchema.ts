import { z } from 'zod';
import { MAX_NAME_LENGTH, NAME_PATTERN } from './specLimits.ts';

/** Most queues one cluster may define. */
export const MAX_QUEUES = 1024;

/** Most levels a queue tree may have (a root queue is level 1). */
export const MAX_QUEUE_DEPTH = 16;

/** A queue name: an identity name that is also one subject token (`muster.in.queue.<name>.set`). */
export const QUEUE_NAME_PATTERN = /^(?!__proto__$)[A-Za-z0-9_-]{1,128}$/;

const queueNameSchema = z.string().max(MAX_NAME_LENGTH).regex(NAME_PATTERN).regex(QUEUE_NAME_PATTERN, {
  error: 'must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)',
});

/** An amount per resource; a resource left out is not named (no guarantee, or no limit). */
export const queueResourcesSchema = z.strictObject({
  cpu: z.int().min(0).optional().meta({ description: 'Millicores.' }),
  memoryMb: z.int().min(0).optional().meta({ description: 'MiB.' }),
  gpus: z.int().min(0).optional().meta({ description: 'Whole GPU devices.' }),
});

/** Which running gangs a queue's pending gangs may stop (DESIGN.md §12). */
export const queuePreemptionSchema = z.strictObject({
  withinQueue: z.enum(['never', 'lower-priority']).default('never')
    .meta({ description: 'lower-priority: a pending gang may stop running gangs of strictly lower priority in its own queue.' }),
  reclaim: z.boolean().default(true)
    .meta({ description: 'Whether gangs of this queue may be stopped while it borrows, so that another queue gets back its guarantee.' }),
});

/** The QueueSpec an operator publishes on `muster.in.queue.<name>.set` (DESIGN.md §12). */
export const queueSpecSchema = z.strictObject({
  name: queueNameSchema.meta({ description: 'The queue\'s name; equals the subject\'s <name>. Jobs name a leaf queue in identity.queue.' }),
  parent: queueNameSchema.optional().meta({ description: 'The parent queue, which must exist; absent: a root queue.' }),
  weight: z.number().positive().max(1_000_000).default(1)
    .meta({ description: 'Weight among sibling queues in hierarchical DRF: a larger weight gets a larger share.' }),
  guaranteed: queueResourcesSchema.prefault({})
    .meta({ description: 'What the queue is guaranteed, per resource named; borrowing and reclaim are judged on these resources.' }),
  max: queueResourcesSchema.prefault({})
    .meta({ description: 'Most the queue and its children may use at once, per resource named; a resource left out is unlimited (up to the ancestors\' max).' }),
  preemption: queuePreemptionSchema.prefault({}),
  defaultRuntimeLimitMs: z.int().min(1).optional()
    .meta({ description: 'The runtime limit of a job of this queue that gives none.' }),
  maxRuntimeLimitMs: z.int().min(1).optional()
    .meta({ description: 'The longest runtime limit a job of this queue may have (the smallest on the path applies).' }),
}).meta({ description: 'A queue: creates or replaces the queue of this name.' });

/** The QueueSpec wire shape, defaults filled in. */
export type QueueSpecWire = z.output<typeof queueSpecSchema>;
