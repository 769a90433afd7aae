import type { JobRequest, MemberResources, PlacementSpec } from '../contract/types.ts';

/** One role of a gang as placement sees it: its members' range and per-member demand. */
export interface RoleShape {
  name: string;
  /** Position in the spec's role order. */
  order: number;
  count: number;
  /** Index of its first member (members are numbered across roles in spec order). */
  firstMember: number;
  resources: MemberResources;
}

/** A gang as placement sees it: its roles heaviest first, its size and placement. */
export interface GangShape {
  size: number;
  /** Roles in placement order: most GPUs per member, then CPU, then memory; ties by role order. */
  roles: RoleShape[];
  placement: PlacementSpec;
}

/**
 * The placement shape of one request (a session reads it once per request through its `SpecMemo`):
 * a job without alternatives is its own request; a job with them has one per variant (`jobRequests`).
 */
export function gangShape(spec: JobRequest): GangShape {
  let first = 0;
  const roles = spec.roles.map((r, order): RoleShape => {
    const role = { name: r.name, order, count: r.count, firstMember: first, resources: r.resources };
    first += r.count;
    return role;
  });
  roles.sort(heavierFirst);
  return { size: first, roles, placement: spec.placement };
}

// the heaviest role is placed first: it has the fewest places to go
function heavierFirst(a: RoleShape, b: RoleShape): number {
  return b.resources.gpus - a.resources.gpus
    || b.resources.cpu - a.resources.cpu
    || b.resources.memoryMb - a.resources.memoryMb
    || a.order - b.order;
}
