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
export function gangNodes(gang: GangLayout): { node: string; address: string; members: number[] }[] {
  const byNode = new Map<string, { node: string; address: string; members: number[] }>();
  for (const m of [...gang.members].sort((a, b) => a.member - b.member)) {
    let entry = byNode.get(m.node);
    if (entry === undefined) byNode.set(m.node, (entry = { node: m.node, address: m.address, members: [] }));
    entry.members.push(m.member);
  }
  // a Map keeps insertion order, and members were inserted by number: nodes by their lowest member
  return [...byNode.values()];
}

function gangVariables(gang: GangLayout, member: number, files: GangFilePaths | undefined): Record<string, string> {
  const nodes = gangNodes(gang);
  const nodeRank = nodes.findIndex((n) => n.members.includes(member));
  const local = nodes[nodeRank]?.members ?? [member];
  const role = gang.members.find((m) => m.member === member)?.role;
  const sameRole = gang.members
    .filter((m) => m.role === role)
    .map((m) => m.member)
    .sort((a, b) => a - b);
  return {
    RANK: String(member),
    WORLD_SIZE: String(gang.size),
    LOCAL_RANK: String(Math.max(0, local.indexOf(member))),
    LOCAL_WORLD_SIZE: String(local.length),
    NODE_RANK: String(Math.max(0, nodeRank)),
    NNODES: String(nodes.length),
    MASTER_ADDR: gang.rendezvous.address,
    MASTER_PORT: String(gang.rendezvous.port),
    MUSTER_ROLE_RANK: String(Math.max(0, sameRole.indexOf(member))),
    MUSTER_ROLE_SIZE: String(sameRole.length),
    MUSTER_ATTEMPT: String(gang.attempt),
    ...(files === undefined ? {} : { MUSTER_HOSTFILE: files.hostfile, MUSTER_GANG_FILE: files.gangFile }),
  };
}
