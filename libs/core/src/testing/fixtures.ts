// Fixture builders for placement tests: node specs (GPUs, NVLink domains, labels) and job specs
// (gangs, roles, placement) as the JSON bodies publishers and agents send, so tests go through
// the real validation and ingest path.

/** Options of a node fixture. */
export interface NodeOptions {
  cpu?: number;
  memoryMb?: number;
  slots?: number;
  labels?: Record<string, string | number>;
  /** GPU devices (ids 0…n-1). */
  gpus?: number;
  /** NVLink domains the devices are split over, in equal consecutive runs. */
  domains?: number;
  gpuMemoryMb?: number;
  model?: string;
}

/** A NodeSpec body: 8 cores and 64 GiB by default, no slot limit, no GPUs. */
export function node(id: string, o: NodeOptions = {}): Record<string, unknown> {
  const count = o.gpus ?? 0;
  const domains = Math.max(1, o.domains ?? 1);
  const perDomain = Math.ceil(count / domains);
  return {
    id,
    labels: o.labels ?? {},
    capacity: { cpu: o.cpu ?? 8000, memoryMb: o.memoryMb ?? 65536, ...(o.slots === undefined ? {} : { slots: o.slots }) },
    gpus: Array.from({ length: count }, (_, g) => ({
      id: g,
      memoryMb: o.gpuMemoryMb ?? 81920,
      model: o.model ?? 'A100',
      nvlinkDomain: Math.floor(g / perDomain),
    })),
  };
}

/** A node with only a slot limit mattering: ample CPU and memory, `slots` slots. */
export function slotNode(id: string, slots: number, o: NodeOptions = {}): Record<string, unknown> {
  return node(id, { cpu: 1_000_000, memoryMb: 1_000_000, ...o, slots });
}

/** Resources of one member. */
export interface MemberOptions {
  cpu?: number;
  memoryMb?: number;
  gpus?: number;
  gpuMemoryMb?: number;
}

/** One role of a gang. */
export interface RoleOptions extends MemberOptions {
  name: string;
  count: number;
  /** An elastic role's minimum (DESIGN.md §13). */
  minCount?: number;
}

/** Options of a job fixture. */
export interface JobOptions extends MemberOptions {
  /** Members of the single role `task` (ignored when `roles` is given). */
  tasks?: number;
  roles?: RoleOptions[];
  policy?: 'pack' | 'spread' | 'same-node';
  ptile?: number;
  gpuLocality?: boolean;
  user?: string;
  queue?: string;
  project?: string;
  priority?: number;
  select?: string;
  minInstances?: number;
  timeoutMs?: number;
  runtimeLimitMs?: number;
}

function member(o: MemberOptions): Record<string, number> {
  return { cpu: o.cpu ?? 1000, memoryMb: o.memoryMb ?? 1024, gpus: o.gpus ?? 0, gpuMemoryMb: o.gpuMemoryMb ?? 0 };
}

/** A JobSpec body: one role of `tasks` members (1 core, 1 GiB each by default), or `roles`. */
export function job(id: string, o: JobOptions = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id,
    identity: { user: o.user ?? 'alice', queue: o.queue ?? 'default', project: o.project ?? 'p1' },
    priority: o.priority ?? 0,
    placement: { policy: o.policy ?? 'pack', ...(o.ptile === undefined ? {} : { ptile: o.ptile }), gpuLocality: o.gpuLocality ?? false },
    select: o.select ?? '',
    minInstances: o.minInstances ?? 0,
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    ...(o.runtimeLimitMs === undefined ? {} : { runtimeLimitMs: o.runtimeLimitMs }),
  };
  if (o.roles !== undefined) body.roles = o.roles.map((r) => ({ name: r.name, count: r.count, ...(r.minCount === undefined ? {} : { minCount: r.minCount }), resources: member(r) }));
  else {
    body.tasks = o.tasks ?? 1;
    body.resources = member(o);
  }
  return body;
}

/**
 * A JobSpec body with alternatives (DESIGN.md §13): the job's own fields from `o`, and one
 * request per entry of `variants` (each its roles or tasks and resources, placement and select,
 * as `job` would give them at the top level).
 */
export function alternativesJob(id: string, variants: readonly JobOptions[], o: JobOptions = {}): Record<string, unknown> {
  const { roles: _roles, tasks: _tasks, resources: _resources, placement: _placement, select: _select, ...body } = job(id, o);
  const alternatives = variants.map((v) => {
    const { roles, tasks, resources, placement, select } = job(id, v);
    return { ...(roles === undefined ? { tasks, resources } : { roles }), placement, select };
  });
  return { ...body, alternatives };
}
