import { parseSelect } from '../select/parseSelect.ts';
import { jobSpecSchema } from './jobSpecSchema.ts';
import type { AlternativeSpecWire, JobSpecWire } from './jobSpecSchema.ts';
import { MAX_GANG_SIZE } from './specLimits.ts';
import { protoKeyIssue, specIssue, specIssueFromZod } from './specIssueFromZod.ts';
import type { FailurePolicy, JobRequest, JobSpec, MemberResources, PlacementSpec, RoleSpec, SpecIssue, Validated } from './types.ts';

const SUBJECT = 'job spec';

// The top-level fields a job with alternatives gives in each variant instead, in the order reported.
const REQUEST_FIELDS = ['roles', 'tasks', 'resources', 'placement', 'select'] as const;

/** A request on the wire: the top level of a JobSpec, or one of its alternatives. */
type RequestWire = Pick<AlternativeSpecWire, 'roles' | 'tasks' | 'resources' | 'placement' | 'select'>;

/**
 * Validates a JobSpec from outside (DESIGN.md §4) and normalises it: defaults filled in, the
 * `tasks`/`resources` shorthand expanded to one role named `task` (in every variant of
 * `alternatives`, DESIGN.md §13); or the first issue, by path.
 */
export function validateJobSpec(input: unknown): Validated<JobSpec> {
  const parsed = jobSpecSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, error: specIssueFromZod(parsed.error.issues, jobSpecSchema, SUBJECT) };
  const wire = parsed.data;
  const common = {
    id: wire.id,
    identity: { user: wire.identity.user, queue: wire.identity.queue, project: wire.identity.project },
    priority: wire.priority,
  };
  const limits = {
    minInstances: wire.minInstances,
    ...(wire.timeoutMs === undefined ? {} : { timeoutMs: wire.timeoutMs }),
    ...(wire.runtimeMs === undefined ? {} : { runtimeMs: wire.runtimeMs }),
    ...(wire.runtimeLimitMs === undefined ? {} : { runtimeLimitMs: wire.runtimeLimitMs }),
    // absent stays absent: a job without one normalises and hashes as before contract v1.2
    ...(wire.failurePolicy === undefined ? {} : { failurePolicy: failurePolicy(wire.failurePolicy) }),
  };
  if (wire.alternatives === undefined) {
    const request = validateRequest(wire, (input as { roles?: unknown }).roles, '');
    if (!('roles' in request)) return { ok: false, error: request };
    const issue = minInstancesIssue(wire.minInstances, [request]);
    if (issue !== undefined) return { ok: false, error: issue };
    // key order as before alternatives existed: a job without them normalises and hashes as it did
    return { ok: true, value: { ...common, roles: request.roles, placement: request.placement, select: request.select, ...limits } };
  }
  // alternatives replace the top-level request: given both, the top-level field is the mistake
  const given = input as Record<string, unknown>;
  for (const field of REQUEST_FIELDS) {
    if (Object.hasOwn(given, field)) return { ok: false, error: specIssue(field, `give alternatives or a top-level ${field}, not both (each alternative has its own roles, placement and select)`, SUBJECT) };
  }
  const alternatives: JobRequest[] = [];
  const rawAlternatives = given.alternatives as { roles?: unknown }[];
  for (const [i, variant] of wire.alternatives.entries()) {
    const request = validateRequest(variant, rawAlternatives[i]?.roles, `alternatives.${i}.`);
    if (!('roles' in request)) return { ok: false, error: request };
    alternatives.push(request);
  }
  const issue = minInstancesIssue(wire.minInstances, alternatives);
  if (issue !== undefined) return { ok: false, error: issue };
  return { ok: true, value: { ...common, alternatives, ...limits } };
}

/** One request (the top level, or a variant at `prefix`), checked and normalised; or its first issue. */
function validateRequest(wire: RequestWire, rawRoles: unknown, prefix: string): JobRequest | SpecIssue {
  const roles = expandRoles(wire, prefix);
  if (!Array.isArray(roles)) return roles;
  const issue = protoEnvIssue(rawRoles, prefix) ?? crossFieldIssue(wire, roles, prefix);
  if (issue !== undefined) return issue;
  const placement: PlacementSpec = {
    policy: wire.placement.policy,
    ...(wire.placement.ptile === undefined ? {} : { ptile: wire.placement.ptile }),
    gpuLocality: wire.placement.gpuLocality,
    // absent stays absent: a job without topology normalises, fingerprints and hashes as before
    ...(wire.placement.topology === undefined ? {} : { topology: { key: wire.placement.topology.key, mode: wire.placement.topology.mode } }),
  };
  return { roles, placement, select: wire.select };
}

function failurePolicy(wire: NonNullable<JobSpecWire['failurePolicy']>): FailurePolicy {
  return {
    maxRestarts: wire.maxRestarts,
    backoffMs: wire.backoffMs,
    rules: wire.rules.map((rule) => ({ onExitCodes: [...rule.onExitCodes], action: rule.action })),
  };
}

function gangSize(request: JobRequest): number {
  return request.roles.reduce((n, role) => n + role.count, 0);
}

// Exactly one of `roles` and the `tasks` + `resources` shorthand.
function expandRoles(wire: RequestWire, prefix: string): RoleSpec[] | SpecIssue {
  if (wire.roles !== undefined) {
    if (wire.tasks !== undefined) return specIssue(`${prefix}tasks`, 'give roles or the tasks/resources shorthand, not both', SUBJECT);
    if (wire.resources !== undefined) return specIssue(`${prefix}resources`, 'give roles or the tasks/resources shorthand, not both', SUBJECT);
    return wire.roles.map((role) => ({
      name: role.name,
      count: role.count,
      // a minimum equal to the count is no elastic role: normalised away, so the job hashes as before
      ...(role.minCount === undefined || role.minCount === role.count ? {} : { minCount: role.minCount }),
      resources: memberResources(role.resources),
      ...(role.command === undefined ? {} : { command: role.command }),
      ...(role.env === undefined ? {} : { env: role.env }),
    }));
  }
  if (wire.tasks === undefined && wire.resources === undefined) {
    return specIssue(`${prefix}roles`, prefix === '' ? 'is required (or the tasks/resources shorthand, or alternatives)' : 'is required (or the tasks/resources shorthand)', SUBJECT);
  }
  if (wire.resources === undefined) return specIssue(`${prefix}resources`, 'is required with tasks', SUBJECT);
  if (wire.tasks === undefined) return specIssue(`${prefix}tasks`, 'is required with resources', SUBJECT);
  return [{ name: 'task', count: wire.tasks, resources: memberResources(wire.resources) }];
}

function memberResources(r: MemberResources): MemberResources {
  return { cpu: r.cpu, memoryMb: r.memoryMb, gpus: r.gpus, gpuMemoryMb: r.gpuMemoryMb };
}

function protoEnvIssue(rawRoles: unknown, prefix: string): SpecIssue | undefined {
  const roles = Array.isArray(rawRoles) ? (rawRoles as { env?: unknown }[]) : [];
  for (const [i, role] of roles.entries()) {
    const issue = protoKeyIssue(role.env, `${prefix}roles.${i}.env`, 'environment variable name', SUBJECT);
    if (issue !== undefined) return issue;
  }
  return undefined;
}

// The rules zod's per-field schemas cannot see, in the order of the fields they name.
function crossFieldIssue(wire: RequestWire, roles: RoleSpec[], prefix: string): SpecIssue | undefined {
  const seen = new Set<string>();
  for (const [i, role] of roles.entries()) {
    const minCount = wire.roles?.[i]?.minCount;
    if (minCount !== undefined && minCount > role.count) return specIssue(`${prefix}roles.${i}.minCount`, `${minCount} is above the role's count ${role.count}`, SUBJECT);
    if (seen.has(role.name)) return specIssue(`${prefix}roles.${i}.name`, `duplicate role name '${role.name}'`, SUBJECT);
    seen.add(role.name);
  }
  const size = roles.reduce((n, role) => n + role.count, 0);
  if (size > MAX_GANG_SIZE) {
    return specIssue(`${prefix}${wire.roles === undefined ? 'tasks' : 'roles'}`, `the gang has ${size} members; at most ${MAX_GANG_SIZE}`, SUBJECT);
  }
  if (wire.placement.ptile !== undefined && wire.placement.policy !== 'pack') {
    return specIssue(`${prefix}placement.ptile`, `applies only to policy 'pack' (policy is '${wire.placement.policy}')`, SUBJECT);
  }
  const select = parseSelect(wire.select);
  if (!select.ok) return specIssue(`${prefix}select`, select.error.message, SUBJECT);
  return undefined;
}

// warm-up is all or nothing: keep the whole gang, or none of it; with alternatives, the whole
// gang of whichever variant commits, so the number given must be one variant's size
function minInstancesIssue(minInstances: number, requests: readonly JobRequest[]): SpecIssue | undefined {
  if (minInstances === 0) return undefined;
  // a gang kept warm is kept whole: it has one size, so none of its roles is elastic
  if (requests.some((r) => r.roles.some((role) => role.minCount !== undefined))) {
    return specIssue('minInstances', `must be 0 for a job with an elastic role (minCount below count): a gang kept warm is kept whole (got ${minInstances})`, SUBJECT);
  }
  const sizes = requests.map(gangSize);
  if (sizes.includes(minInstances)) return undefined;
  const allowed = sizes.length === 1 ? `the gang size ${sizes[0]}` : `the gang size of one alternative (${[...new Set(sizes)].join(', ')})`;
  return specIssue('minInstances', `must be 0 or ${allowed} (got ${minInstances})`, SUBJECT);
}
