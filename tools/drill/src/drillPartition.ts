import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsServerHandle } from '@muster/stack';
import type { FaultContext, FaultRecord } from './drillFaults.ts';

// the cgroup v2 hierarchy: beside v1 controllers (hybrid), or on its own
const CGROUP2 = existsSync('/sys/fs/cgroup/unified/cgroup.procs') ? '/sys/fs/cgroup/unified' : existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : null;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const iptables = (args: string[]): void => {
  execFileSync('iptables', ['-w', ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
};

/** Why this machine cannot cut a replica off the network (not root, no cgroup v2, no iptables), or null when it can. */
export function partitionUnavailable(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (iptables and a cgroup of its own)';
  if (CGROUP2 === null) return 'needs a cgroup v2 hierarchy';
  try {
    iptables(['-L', 'OUTPUT', '-n']);
  } catch {
    return 'needs iptables (apt-get install -y iptables)';
  }
  return null;
}

/**
 * The leader cut off from NATS while the standbys are not: iptables rules drop every loopback
 * packet to and from the local ports of the leader's TCP connections, and, for the connections it
 * makes meanwhile, every packet from a cgroup of the drill's own the leader's process is moved
 * into, for `partitionMs`, longer than the lease; a standby must take over, and the old leader, when the rule goes, must be fenced. Only
 * the drill's replica process and loopback are touched; the rule and the cgroup are removed
 * whatever happens.
 */
export async function partitionLeader(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const why = partitionUnavailable();
  if (why !== null) {
    record.skipped = why;
    return;
  }
  const leader = await ctx.cluster.leader(5_000);
  if (leader === null || ctx.busy.has(leader.id)) {
    record.skipped = leader === null ? 'no replica answered as leader' : `leader ${leader.id} is under another fault`;
    return;
  }
  const others = ctx.cluster.replicaIds.filter((r) => r !== leader.id && !ctx.busy.has(r) && !ctx.cluster.paused.has(r) && ctx.cluster.replica(r).running);
  if (others.length === 0) {
    record.skipped = 'no healthy standby to take over';
    return;
  }
  ctx.busy.add(leader.id);
  record.target = leader.id;
  const proc = ctx.cluster.replica(leader.id);
  const rel = `muster-drill-${process.pid}-${record.n}`;
  const dir = join(CGROUP2 as string, rel);
  // a socket keeps the cgroup it was made in: the cgroup rule cuts the connections the leader makes
  // from now on, the port rules the ones it has (both directions, loopback only)
  const rules: string[][] = [['OUTPUT', '-o', 'lo', '-m', 'cgroup', '--path', rel, '-j', 'DROP']];
  mkdirSync(dir, { recursive: true });
  const added: string[][] = [];
  try {
    writeFileSync(join(dir, 'cgroup.procs'), String(proc.pid));
    for (const port of localPorts(proc.pid)) {
      rules.push(['OUTPUT', '-o', 'lo', '-p', 'tcp', '--sport', String(port), '-j', 'DROP'], ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), '-j', 'DROP']);
    }
    record.at = Date.now();
    for (const rule of rules) {
      iptables(['-A', ...rule]);
      added.push(rule);
    }
    const next = ctx.cluster.leader(ctx.opts.partitionMs, leader.id);
    await sleep(ctx.opts.partitionMs);
    record.nextLeader = (await next)?.id ?? null;
  } finally {
    for (const rule of added) iptables(['-D', ...rule]);
    // back to the root cgroup, then the drill's cgroup goes
    if (proc.running) writeFileSync(join(CGROUP2 as string, 'cgroup.procs'), String(proc.pid));
    rmdirSync(dir);
  }
}

// the local ports of a process's TCP connections on loopback (`ss -tnpH`: ESTAB 0 0 127.0.0.1:PORT 127.0.0.1:… users:(("node",pid=N,fd=…)))
function localPorts(pid: number, peers: ReadonlySet<number> | null = null): number[] {
  const out = execFileSync('ss', ['-tnpH'], { encoding: 'utf8', timeout: 10_000 });
  const ports = new Set<number>();
  for (const line of out.split('\n')) {
    if (!line.includes(`pid=${pid},`)) continue;
    const m = /\s127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:(\d+)/.exec(line);
    if (m !== null && (peers === null || peers.has(Number(m[2])))) ports.add(Number(m[1]));
  }
  return [...ports].sort((a, b) => a - b);
}

// a node's route (cluster) port, from the config libs/stack wrote into its data folder
function clusterPort(node: NatsServerHandle): number {
  const config = readFileSync(join(node.dataDir, 'nats.conf'), 'utf8');
  const m = /cluster\s*\{[^}]*listen:\s*"127\.0\.0\.1:(\d+)"/.exec(config);
  if (m === null) throw new Error(`no cluster port in ${node.name}'s config`);
  return Number(m[1]);
}

/**
 * One NATS node cut off from the other two (the minority side; the other two keep the R3
 * streams' quorum): iptables rules on loopback drop its route traffic (packets to and from its
 * route port, and from its connections to the others' route ports, and, through a cgroup of the
 * drill's own, the route connections it makes meanwhile) for `natsPartitionMs`, longer than
 * nats-server's raft election timeout; clients stay connected to it and get no JetStream from it.
 */
export async function partitionNats(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const why = partitionUnavailable();
  if (why !== null) {
    record.skipped = why;
    return;
  }
  const nodes = ctx.cluster.nats.nodes;
  // a node cut off counts as down: two would take the quorum
  if (nodes.some((node) => !node.running || ctx.busy.has(node.name))) {
    record.skipped = 'another NATS node is down';
    return;
  }
  const node = ctx.random.pick(nodes);
  ctx.busy.add(node.name);
  record.target = node.name;
  const own = clusterPort(node);
  const others = new Set(nodes.filter((n) => n !== node).map(clusterPort));
  const rel = `muster-drill-${process.pid}-${record.n}`;
  const dir = join(CGROUP2 as string, rel);
  const rules: string[][] = [
    ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(own), '-j', 'DROP'],
    ['OUTPUT', '-o', 'lo', '-p', 'tcp', '--sport', String(own), '-j', 'DROP'],
    ['OUTPUT', '-o', 'lo', '-m', 'cgroup', '--path', rel, '-p', 'tcp', '-m', 'multiport', '--dports', [...others].join(','), '-j', 'DROP'],
  ];
  mkdirSync(dir, { recursive: true });
  const added: string[][] = [];
  try {
    writeFileSync(join(dir, 'cgroup.procs'), String(node.pid));
    for (const port of localPorts(node.pid, others)) {
      rules.push(['OUTPUT', '-o', 'lo', '-p', 'tcp', '--sport', String(port), '-j', 'DROP'], ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), '-j', 'DROP']);
    }
    record.at = Date.now();
    for (const rule of rules) {
      iptables(['-A', ...rule]);
      added.push(rule);
    }
    await sleep(ctx.opts.natsPartitionMs);
  } finally {
    for (const rule of added) iptables(['-D', ...rule]);
    if (node.running) writeFileSync(join(CGROUP2 as string, 'cgroup.procs'), String(node.pid));
    rmdirSync(dir);
  }
}
