import type { GangLayout } from '@muster/core';

/** What a member's environment is built from: who it is, where it runs, and its gang as bound. */
export interface MemberIdentity {
  jobId: string;
  member: number;
  role: string;
  nodeId: string;
  gpuIds: readonly number[];
  /** The gang at the bind that starts the member (absent on a log decided as contract v1.1). */
  gang?: GangLayout;
  /** The role's own `env`. */
  env?: Record<string, string>;
  /** Where the agent writes the gang's hostfile and gang file (`gangFiles`). */
  files?: GangFilePaths;
}

/** The paths of a gang's hostfile and gang file on a node. */
export interface GangFilePaths {
  hostfile: string;
  gangFile: string;
}

/** A gang's node in node-rank order, with its members sorted. */
export interface GangNode {
  node: string;
  address: string;
  members: number[];
}

/** Where each member stands in its gang, computed once per gang (a bind's members share its layout). */
interface GangIndex {
  nodes: GangNode[];
  /** Per member: its node's rank, its index there, its index within its role, its role's size. */
  place: Map<number, { nodeRank: number; localRank: number; roleRank: number; roleSize: number }>;
}

const indexes = new WeakMap<GangLayout, GangIndex>();

/**
 * The variables muster gives a member (DESIGN.md §15), the same for a simulated member and a real
 * one: the names torch.distributed, torchrun, Horovod, DeepSpeed and MPI launchers read, computed
 * from the bind's gang, then the role's own `env` (which wins over those), then muster's identity
 * (`MUSTER_JOB_ID`, `MUSTER_MEMBER`, `MUSTER_ROLE`, `MUSTER_NODE`, `CUDA_VISIBLE_DEVICES`), which
 * nothing overrides. Without a gang (a log decided as contract v1.1) only the role's env and the identity.
 */
export function memberEnvironment(who: MemberIdentity): Record<string, string> {
  return {
    ...(who.gang === undefined ? {} : gangVariables(who.gang, who.member, who.files)),
    ...who.env,
    MUSTER_JOB_ID: who.jobId,
    MUSTER_MEMBER: String(who.member),
    MUSTER_ROLE: who.role,
    MUSTER_NODE: who.nodeId,
    CUDA_VISIBLE_DEVICES: who.gpuIds.join(','),
  };
}

/** A gang's nodes in node-rank order (each node ranked by its lowest member), with their members sorted. */
export function gangNodes(gang: GangLayout): GangNode[] {
  return indexOf(gang).nodes;
}

function indexOf(gang: GangLayout): GangIndex {
  const known = indexes.get(gang);
  if (known !== undefined) return known;
  const sorted = [...gang.members].sort((a, b) => a.member - b.member);
  // members come by number, so a node is ranked by its lowest member
  const nodes: GangNode[] = [];
  const nodeRank = new Map<string, number>();
  const roles = new Map<string, number>();
  const place: GangIndex['place'] = new Map();
  for (const m of sorted) {
    let rank = nodeRank.get(m.node);
    if (rank === undefined) {
      rank = nodes.length;
      nodeRank.set(m.node, rank);
      nodes.push({ node: m.node, address: m.address, members: [] });
    }
    const node = nodes[rank] as GangNode;
    const roleRank = roles.get(m.role) ?? 0;
    roles.set(m.role, roleRank + 1);
    place.set(m.member, { nodeRank: rank, localRank: node.members.length, roleRank, roleSize: 0 });
    node.members.push(m.member);
  }
  for (const m of sorted) {
    const p = place.get(m.member);
    if (p !== undefined) p.roleSize = roles.get(m.role) ?? 0;
  }
  const index = { nodes, place };
  indexes.set(gang, index);
  return index;
}

function gangVariables(gang: GangLayout, member: number, files: GangFilePaths | undefined): Record<string, string> {
  const index = indexOf(gang);
  const p = index.place.get(member) ?? { nodeRank: 0, localRank: 0, roleRank: 0, roleSize: 1 };
  return {
    RANK: String(member),
    WORLD_SIZE: String(gang.size),
    LOCAL_RANK: String(p.localRank),
    LOCAL_WORLD_SIZE: String(index.nodes[p.nodeRank]?.members.length ?? 1),
    NODE_RANK: String(p.nodeRank),
    NNODES: String(index.nodes.length),
    MASTER_ADDR: gang.rendezvous.address,
    MASTER_PORT: String(gang.rendezvous.port),
    MUSTER_ROLE_RANK: String(p.roleRank),
    MUSTER_ROLE_SIZE: String(p.roleSize),
    MUSTER_ATTEMPT: String(gang.attempt),
    ...(files === undefined ? {} : { MUSTER_HOSTFILE: files.hostfile, MUSTER_GANG_FILE: files.gangFile }),
  };
}
