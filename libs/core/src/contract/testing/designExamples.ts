/** The JobSpec example of DESIGN.md §4, exactly as published there (a fresh copy per call). */
export function designJobSpecExample(): Record<string, unknown> {
  return {
    id: 'j1', identity: { user: 'alice', queue: 'default', project: 'p1' },
    priority: 0,
    roles: [{ name: 'world', count: 1, resources: { cpu: 1000, memoryMb: 2048 } },
      { name: 'agent', count: 2,
        resources: { cpu: 200, memoryMb: 256, gpus: 1, gpuMemoryMb: 4096 } }],
    placement: { policy: 'pack', ptile: 4, gpuLocality: false },
    select: "zone == 'a' && gpu_model in ('A100','H100')",
    minInstances: 0, timeoutMs: 600000, runtimeMs: 5000,
  };
}

/** The shorthand of DESIGN.md §4 (`"tasks": 7, "resources": {...}`), with the fields it needs. */
export function designShorthandExample(): Record<string, unknown> {
  return { id: 'j7', identity: { user: 'bob' }, tasks: 7, resources: { cpu: 500, memoryMb: 1024 } };
}

/** The NodeSpec example of DESIGN.md §4, exactly as published there (a fresh copy per call). */
export function designNodeSpecExample(): Record<string, unknown> {
  return {
    id: 'n1', labels: { zone: 'a', gpu_model: 'A100' },
    capacity: { cpu: 8000, memoryMb: 65536, slots: 8 },
    gpus: [{ id: 0, memoryMb: 81920, model: 'A100', nvlinkDomain: 0 }],
  };
}

/**
 * The DESIGN.md §13 shape of alternatives: the §4 example's request as the first variant (8 A100s
 * in its zone, here as roles), and a shorthand second (4 members anywhere).
 */
export function designAlternativesExample(): Record<string, unknown> {
  const { roles, placement, select, ...rest } = designJobSpecExample();
  return {
    ...rest,
    id: 'j2',
    alternatives: [
      { roles, placement, select },
      { tasks: 4, resources: { cpu: 500, memoryMb: 1024, gpus: 1 }, select: "gpu_model == 'H100'" },
    ],
  };
}
