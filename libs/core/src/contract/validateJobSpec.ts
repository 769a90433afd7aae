import { parseSelect } from '../select/parseSelect.ts';
import { jobSpecSchema } from './jobSpecSchema.ts';
import type { JobSpecWire } from './jobSpecSchema.ts';
import { MAX_GANG_SIZE } from './specLimits.ts';
import { protoKeyIssue, specIssue, specIssueFromZod } from './specIssueFromZod.ts';
import type { JobSpec, MemberResources, RoleSpec, SpecIssue, Validated } from './types.ts';

const SUBJECT = 'job spec';

/**
 * Validates a JobSpec from outside (DESIGN.md §4) and normalises it: defaults filled in, the
 * `tasks`/`resources` shorthand expanded to one role named `task`; or the first issue, by path.
 */
export function validateJobSpec(input: unknown): Validated<JobSpec> {
  const parsed = jobSpecSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, error: specIssueFromZod(parsed.error.issues, jobSpecSchema, SUBJECT) };
  const wire = parsed.data;
  const roles = expandRoles(wire);
  if (!Array.isArray(roles)) return { ok: false, error: roles };
  const issue = protoEnvIssue(input) ?? crossFieldIssue(wire, roles);
  if (issue !== undefined) return { ok: false, error: issue };
  const spec: JobSpec = {
    id: wire.id,
    identity: { user: wire.identity.user, queue: wire.identity.queue, project: wire.identity.project },
    priority: wire.priority,
    roles,
    placement: {
      policy: wire.placement.policy,
      ...(wire.placement.ptile === undefined ? {} : { ptile: wire.placement.ptile }),
      gpuLocality: wire.placement.gpuLocality,
      // absent stays absent: a job without topology normalises, fingerprints and hashes as before
      ...(wire.placement.topology === undefined ? {} : { topology: { key: wire.placement.topology.key, mode: wire.placement.topology.mode } }),
    },
    select: wire.select,
    minInstances: wire.minInstances,
    ...(wire.timeoutMs === undefined ? {} : { timeoutMs: wire.timeoutMs }),
    ...(wire.runtimeMs === undefined ? {} : { runtimeMs: wire.runtimeMs }),
    ...(wire.runtimeLimitMs === undefined ? {} : { runtimeLimitMs: wire.runtimeLimitMs }),
  };
  return { ok: true, value: spec };
}

// Exactly one of `roles` and the `tasks` + `resources` shorthand.
function expandRoles(wire: JobSpecWire): RoleSpec[] | SpecIssue {
  if (wire.roles !== undefined) {
    if (wire.tasks !== undefined) return specIssue('tasks', 'give roles or the tasks/resources shorthand, not both', SUBJECT);
    if (wire.resources !== undefined) return specIssue('resources', 'give roles or the tasks/resources shorthand, not both', SUBJECT);
    return wire.roles.map((role) => ({
      name: role.name,
      count: role.count,
      resources: memberResources(role.resources),
      ...(role.command === undefined ? {} : { command: role.command }),
      ...(role.env === undefined ? {} : { env: role.env }),
    }));
  }
  if (wire.tasks === undefined && wire.resources === undefined) {
    return specIssue('roles', 'is required (or the tasks/resources shorthand)', SUBJECT);
  }
  if (wire.resources === undefined) return specIssue('resources', 'is required with tasks', SUBJECT);
  if (wire.tasks === undefined) return specIssue('tasks', 'is required with resources', SUBJECT);
  return [{ name: 'task', count: wire.tasks, resources: memberResources(wire.resources) }];
}

function memberResources(r: MemberResources): MemberResources {
  return { cpu: r.cpu, memoryMb: r.memoryMb, gpus: r.gpus, gpuMemoryMb: r.gpuMemoryMb };
}

function protoEnvIssue(input: unknown): SpecIssue | undefined {
  const roles = (input as { roles?: { env?: unknown }[] }).roles ?? [];
  for (const [i, role] of roles.entries()) {
    const issue = protoKeyIssue(role.env, `roles.${i}.env`, 'environment variable name', SUBJECT);
    if (issue !== undefined) return issue;
  }
  return undefined;
}

// The rules zod's per-field schemas cannot see, in the order of the fields they name.
function crossFieldIssue(wire: JobSpecWire, roles: RoleSpec[]): SpecIssue | undefined {
  const seen = new Set<string>();
  for (const [i, role] of roles.entries()) {
    if (seen.has(role.name)) return specIssue(`roles.${i}.name`, `duplicate role name '${role.name}'`, SUBJECT);
    seen.add(role.name);
  }
  const size = roles.reduce((n, role) => n + role.count, 0);
  if (size > MAX_GANG_SIZE) {
    return specIssue(wire.roles === undefined ? 'tasks' : 'roles', `the gang has ${size} members; at most ${MAX_GANG_SIZE}`, SUBJECT);
  }
  if (wire.placement.ptile !== undefined && wire.placement.policy !== 'pack') {
    return specIssue('placement.ptile', `applies only to policy 'pack' (policy is '${wire.placement.policy}')`, SUBJECT);
  }
  const select = parseSelect(wire.select);
  if (!select.ok) return specIssue('select', select.error.message, SUBJECT);
  // warm-up is all or nothing: keep the whole gang, or none of it
  if (wire.minInstances !== 0 && wire.minInstances !== size) {
    return specIssue('minInstances', `must be 0 or the gang size ${size} (got ${wire.minInstances})`, SUBJECT);
  }
  return undefined;
}
