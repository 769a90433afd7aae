// The member environment of DESIGN.md §15, computed from a bind's gang: ranks, node ranks, the
// rendezvous, role ranks, the attempt, the files; the role's env wins over the framework names,
// never over muster's identity. And the hostfile, one line per node in node-rank order.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { gangNodes, hostfileText, memberEnvironment } from '@muster/agent/testing';
import type { GangLayout } from '@muster/core';

// 4 members, 2 per node; member 0 on n2 so node order follows members, not names
const gang: GangLayout = {
  attempt: 1,
  size: 4,
  rendezvous: { node: 'n2', address: '10.0.0.2', port: 29501 },
  members: [
    { member: 0, role: 'trainer', node: 'n2', address: '10.0.0.2', gpuIds: [0] },
    { member: 1, role: 'trainer', node: 'n1', address: '10.0.0.1', gpuIds: [0] },
    { member: 2, role: 'trainer', node: 'n2', address: '10.0.0.2', gpuIds: [1] },
    { member: 3, role: 'ps', node: 'n1', address: '10.0.0.1', gpuIds: [] },
  ],
};
const files = { hostfile: '/s/gangs/j.3/hostfile', gangFile: '/s/gangs/j.3/gang.json' };

describe('memberEnvironment', () => {
  it('gives each member the names torch.distributed, torchrun and MPI launchers read', () => {
    const env = (member: number, node: string, role: string, gpuIds: number[]): Record<string, string> =>
      memberEnvironment({ jobId: 'j', member, role, nodeId: node, gpuIds, gang, files });
    expect(env(1, 'n1', 'trainer', [0])).toEqual({
      RANK: '1',
      WORLD_SIZE: '4',
      LOCAL_RANK: '0',
      LOCAL_WORLD_SIZE: '2',
      NODE_RANK: '1',
      NNODES: '2',
      MASTER_ADDR: '10.0.0.2',
      MASTER_PORT: '29501',
      MUSTER_ROLE_RANK: '1',
      MUSTER_ROLE_SIZE: '3',
      MUSTER_ATTEMPT: '1',
      MUSTER_HOSTFILE: '/s/gangs/j.3/hostfile',
      MUSTER_GANG_FILE: '/s/gangs/j.3/gang.json',
      MUSTER_JOB_ID: 'j',
      MUSTER_MEMBER: '1',
      MUSTER_ROLE: 'trainer',
      MUSTER_NODE: 'n1',
      CUDA_VISIBLE_DEVICES: '0',
    });
    expect(env(2, 'n2', 'trainer', [1])).toMatchObject({ RANK: '2', LOCAL_RANK: '1', NODE_RANK: '0', MUSTER_ROLE_RANK: '2' });
    expect(env(3, 'n1', 'ps', [])).toMatchObject({ LOCAL_RANK: '1', NODE_RANK: '1', MUSTER_ROLE_RANK: '0', MUSTER_ROLE_SIZE: '1', CUDA_VISIBLE_DEVICES: '' });
  });

  it("lets a role's env win over the framework names but never over muster's identity", () => {
    const env = memberEnvironment({ jobId: 'j', member: 0, role: 'trainer', nodeId: 'n2', gpuIds: [0], gang, env: { MASTER_PORT: '7000', MUSTER_MEMBER: '9', CUDA_VISIBLE_DEVICES: '5', X: 'y' } });
    expect(env).toMatchObject({ MASTER_PORT: '7000', MUSTER_MEMBER: '0', CUDA_VISIBLE_DEVICES: '0', X: 'y' });
  });

  it('without a gang (a log decided as contract v1.1) gives only what it gave before', () => {
    expect(memberEnvironment({ jobId: 'j', member: 2, role: 'w', nodeId: 'n1', gpuIds: [1, 2], env: { A: 'b' } })).toEqual({
      A: 'b',
      MUSTER_JOB_ID: 'j',
      MUSTER_MEMBER: '2',
      MUSTER_ROLE: 'w',
      MUSTER_NODE: 'n1',
      CUDA_VISIBLE_DEVICES: '1,2',
    });
  });

  it('writes the hostfile one line per node, in node-rank order, with its member count as slots', () => {
    expect(hostfileText(gang)).toBe('10.0.0.2 slots=2\n10.0.0.1 slots=2\n');
  });

  it('ranks are a permutation: every RANK once, LOCAL_RANKs 0..n-1 per node, NODE_RANKs 0..NNODES-1 in order of lowest member', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 12 }), (nodeOf) => {
        const g: GangLayout = {
          attempt: 0,
          size: nodeOf.length,
          rendezvous: { node: `n${nodeOf[0]}`, address: 'a', port: 1 },
          members: nodeOf.map((n, member) => ({ member, role: member % 2 === 0 ? 'a' : 'b', node: `n${n}`, address: `h${n}`, gpuIds: [] })),
        };
        const envs = g.members.map((m) => memberEnvironment({ jobId: 'j', member: m.member, role: m.role, nodeId: m.node, gpuIds: [], gang: g }));
        expect(envs.map((e) => Number(e.RANK))).toEqual(nodeOf.map((_, i) => i));
        const nodes = gangNodes(g);
        expect(envs.every((e) => e.NNODES === String(nodes.length))).toBe(true);
        for (const [rank, n] of nodes.entries()) {
          const local = envs.filter((e) => nodeOf[Number(e.RANK)] === Number(n.node.slice(1)));
          expect(local.map((e) => Number(e.LOCAL_RANK))).toEqual(local.map((_, i) => i));
          expect(new Set(local.map((e) => e.NODE_RANK))).toEqual(new Set([String(rank)]));
          expect(local.every((e) => e.LOCAL_WORLD_SIZE === String(local.length))).toBe(true);
        }
        // node ranks follow the lowest member of each node
        expect(nodes.map((n) => n.members[0])).toEqual([...nodes.map((n) => n.members[0] as number)].sort((a, b) => a - b));
        const hostLines = hostfileText(g).trim().split('\n');
        expect(hostLines.map((l) => Number(l.split('slots=')[1])).reduce((a, b) => a + b, 0)).toBe(nodeOf.length);
      }),
    );
  });
});
