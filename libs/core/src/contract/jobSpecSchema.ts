import { z } from 'zod';
import {
  ENV_NAME_PATTERN, ID_PATTERN, MAX_ALTERNATIVES, MAX_BACKOFF_MS, MAX_FAILURE_RULES, MAX_GANG_SIZE, MAX_RESTARTS, MAX_RULE_EXIT_CODES, MAX_NAME_LENGTH, MAX_PRIORITY, MAX_SELECT_LENGTH, MIN_ALTERNATIVES, NAME_PATTERN,
  NODE_LABEL_PATTERN,
} from './specLimits.ts';

const ID_MESSAGE = 'must be 1 to 128 characters from A-Z, a-z, 0-9, _ and - (and not __proto__)';

/** An id that can be a subject token: jobs, nodes and role names. */
export const idSchema = z.string().regex(ID_PATTERN, { error: ID_MESSAGE });

const nameSchema = z.string().min(1).max(MAX_NAME_LENGTH).regex(NAME_PATTERN, { error: 'must not be __proto__' });

/** What each member of a role asks for, on the wire. */
export const memberResourcesSchema = z.strictObject({
  cpu: z.int().min(0).meta({ description: 'CPU per member, in millicores (1000 = one core).' }),
  memoryMb: z.int().min(0).meta({ description: 'Memory per member, in MiB.' }),
  gpus: z.int().min(0).default(0).meta({ description: 'Whole GPU devices per member, all on one host.' }),
  gpuMemoryMb: z.int().min(0).default(0)
    .meta({ description: 'Least free memory, in MiB, each of the member\'s GPU devices must have.' }),
}).meta({ description: 'Resources of one member. Every member also uses one slot of its host.' });

const commandSchema = z.union(
  [
    z.string().min(1).meta({ description: 'Run by /bin/sh -c.' }),
    z.tuple([z.string().min(1)], z.string()).meta({ description: 'argv: program, then arguments.' }),
  ],
  { error: 'must be a non-empty string or a non-empty array of strings' },
).meta({ description: 'What a real agent runs for each member.' });

/** One role of a gang, on the wire. */
export const roleSpecSchema = z.strictObject({
  name: idSchema.meta({ description: 'Role name, unique within the job.' }),
  count: z.int().min(1).max(MAX_GANG_SIZE).meta({ description: 'Members of this role.' }),
  minCount: z.int().min(1).max(MAX_GANG_SIZE).optional()
    .meta({ description: 'An elastic role (DESIGN.md section 13): the fewest members it runs with (at most count; absent: count). The gang commits with as many as fit, grows toward count in later sessions and shrinks to minCount under preemption before it is stopped.' }),
  resources: memberResourcesSchema,
  command: commandSchema.optional(),
  env: z.record(
    z.string().regex(ENV_NAME_PATTERN, { error: 'environment variable name must match [A-Za-z_][A-Za-z0-9_]*' }),
    z.string(),
  ).optional().meta({ description: 'Extra environment variables for each member\'s command.' }),
});

/** Placement beyond a node (contract v1.1): keep the gang within hosts that share a label's value. */
export const topologySpecSchema = z.strictObject({
  key: z.string().max(MAX_NAME_LENGTH).regex(NODE_LABEL_PATTERN, { error: 'label name must match [A-Za-z_][A-Za-z0-9_.-]*' })
    .meta({ description: 'The node label whose value names a topology domain (e.g. "rack").' }),
  mode: z.enum(['required', 'preferred'])
    .meta({ description: 'required: every member on hosts with one value of the label (hosts without it are not candidates); preferred: the fewest distinct values (hosts without it are each a domain of their own).' }),
}).meta({ description: 'Topology placement: the gang within one domain of a node label (DESIGN.md section 13).' });

/** Placement options, on the wire. */
export const placementSpecSchema = z.strictObject({
  policy: z.enum(['pack', 'spread', 'same-node']).default('pack')
    .meta({ description: 'pack: fewest hosts; spread: every member on a distinct host; same-node: all members on one host.' }),
  ptile: z.int().min(1).max(MAX_GANG_SIZE).optional()
    .meta({ description: 'Only with pack: members per host (the last host takes the remainder). Absent: balanced plans.' }),
  gpuLocality: z.boolean().default(false)
    .meta({ description: 'The GPUs the gang takes on any one host lie within one nvlinkDomain.' }),
  topology: topologySpecSchema.optional(),
});

/** One rule of a failure policy: what a member's exit with one of these codes does to the gang. */
export const failureRuleSchema = z.strictObject({
  onExitCodes: z.array(z.int().min(-2147483648).max(2147483647)).min(1).max(MAX_RULE_EXIT_CODES)
    .meta({ description: 'Exit codes this rule matches.' }),
  action: z.enum(['restart', 'fail', 'ignore'])
    .meta({ description: 'restart: the whole gang is stopped and placed again (while restarts remain, else it fails); fail: the gang is stopped and the job fails at once; ignore: the member just completes and the gang runs on.' }),
});

/** What a member's failure does to its gang (DESIGN.md §15, contract v1.2), on the wire. */
export const failurePolicySchema = z.strictObject({
  maxRestarts: z.int().min(0).max(MAX_RESTARTS).default(0)
    .meta({ description: `How many times the whole gang may be restarted after a member fails (0..${MAX_RESTARTS}); a lost node's restart does not count.` }),
  backoffMs: z.int().min(0).max(MAX_BACKOFF_MS).default(10000)
    .meta({ description: 'A restarted gang is placed again no earlier than this long (ms) after the failure.' }),
  rules: z.array(failureRuleSchema).max(MAX_FAILURE_RULES).default([])
    .meta({ description: 'By exit code, first match wins; a failure no rule matches (or a signal) restarts the gang while restarts remain, else fails it.' }),
}).meta({ description: 'What a failing member (done with ok false) does to its gang (contract v1.2). Absent: no restart; the gang is stopped and fails at its first failing member.' });

/** The identity a job runs for, on the wire. */
export const identitySchema = z.strictObject({
  user: nameSchema.meta({ description: 'Who submits; DRF shares are per user.' }),
  queue: nameSchema.default('default'),
  project: nameSchema.default('default'),
});

const selectSchema = z.string().max(MAX_SELECT_LENGTH)
  .meta({ description: 'Boolean expression over host labels and capacities (see docs/job-spec.md); empty: every host.' });

// The fields of one request (DESIGN.md §4, §13): the top level of a JobSpec, or one of its
// alternatives; `roles` says what else may stand in for it there.
function requestFields(roles: string) {
  return {
    roles: z.array(roleSpecSchema).min(1).max(MAX_GANG_SIZE).optional()
      .meta({ description: roles }),
    tasks: z.int().min(1).max(MAX_GANG_SIZE).optional()
      .meta({ description: 'Shorthand: one role named "task" of this many members; needs resources, excludes roles.' }),
    resources: memberResourcesSchema.optional()
      .meta({ description: 'Shorthand: the resources of each of the tasks members; needs tasks, excludes roles.' }),
    placement: placementSpecSchema.prefault({}),
    select: selectSchema.default(''),
  };
}

/**
 * One variant of a job's `alternatives` (DESIGN.md §13): a request of its own, with the same rules
 * as the top level (roles, or tasks with resources; placement; select), checked by `validateJobSpec`.
 */
export const alternativeSpecSchema = z.strictObject(
  requestFields('The roles of this variant\'s gang; members are numbered 0..N-1 across roles, in this order. Give roles, or tasks with resources.'),
).meta({ description: 'One alternative request: tried in order within one attempt; the first that fits commits, all or nothing.' });

/**
 * The JobSpec as publishers send it (DESIGN.md §4): every object strict, defaults filled in. The
 * rules that span fields (roles or tasks+resources or alternatives, unique role names, gang size,
 * ptile with pack, select syntax, minInstances) are checked by `validateJobSpec`.
 */
export const jobSpecSchema = z.strictObject({
  id: idSchema.meta({ description: 'Job id; becomes a subject token.' }),
  identity: identitySchema,
  priority: z.int().min(-MAX_PRIORITY).max(MAX_PRIORITY).default(0)
    .meta({ description: 'Higher runs first.' }),
  ...requestFields('The roles of the gang; members are numbered 0..N-1 across roles, in this order. Give roles, or tasks with resources, or alternatives.'),
  alternatives: z.array(alternativeSpecSchema).min(MIN_ALTERNATIVES).max(MAX_ALTERNATIVES).optional()
    .meta({ description: `Instead of roles (or tasks and resources), placement and select: ${MIN_ALTERNATIVES} to ${MAX_ALTERNATIVES} requests, tried in order; the first that fits commits (GangCommitted.alternative is its index).` }),
  minInstances: z.int().min(0).max(MAX_GANG_SIZE).default(0)
    .meta({ description: '0: release members as they finish; the gang size: keep the whole gang warm until closed (with alternatives: the size of one variant; the committed variant is kept whole). Nothing else.' }),
  timeoutMs: z.int().min(1).optional()
    .meta({ description: 'Longest wait to be placed, in ms, from when the job last became pending.' }),
  runtimeMs: z.int().min(0).optional()
    .meta({ description: 'Hint for simulated agents: how long each member runs, in ms.' }),
  failurePolicy: failurePolicySchema.optional(),
  runtimeLimitMs: z.int().min(1).optional()
    .meta({ description: 'Longest the gang may run, in ms from its commit: the first session at or after that stops it (runtime-limit). Plans reservations too; absent: the policy assumes assumedRuntimeMs.' }),
});

/** The JobSpec wire shape after zod has filled in defaults, before the cross-field checks. */
export type JobSpecWire = z.output<typeof jobSpecSchema>;

/** One variant of `alternatives`, on the wire, after defaults. */
export type AlternativeSpecWire = z.output<typeof alternativeSpecSchema>;
