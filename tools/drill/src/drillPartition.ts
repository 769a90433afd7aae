import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsServerHandle } from '@muster/stack';
import type { FaultContext, FaultRecord } from './drillFaultRecord.ts';
import { CGROUP2, iptables } from './drillNetworkChecks.ts';
import { sleep } from './drillSleep.ts';
import { currentLeader, pickNatsNode, recoverStalledNode } from './drillTargets.ts';

/**
 * Latency and loss between every replica and NATS, for `slowMs`: each chunk a replica sends
 * waits `slowDelayMs` in the drill's proxies (drillLinkProxy.ts) before it goes on to NATS, and
 * an iptables rule on loopback drops each packet sent to the proxies' ports (by the replicas, and
 * by no one else) with probability `slowLoss` (`-m statistic --mode random`), so the replicas'
 * TCP retransmits as on a lossy link; NATS's answers come back undelayed (a round trip takes
 * `slowDelayMs` more, as with `netem delay` on the replica's host). tc netem itself is not used:
 * this machine's kernel is built without it (no CONFIG_NET_SCH_NETEM, no modules). A replica
 * whose client found a NATS node's own address in the servers' gossip and reconnected to it
 * directly is not slowed: the record counts the connections through the proxies.
 */
export async function slowNetwork(record: FaultRecord, ctx: FaultContext): Promise<void> {
  const link = ctx.cluster.link;
  if (link === null) throw new Error('the replicas were started without the drill\'s proxies');
  // every replica at once: one such fault at a time (it takes no replica away from the others' rules)
  if (ctx.busy.has('replicas')) {
    record.skipped = "the replicas' network is slowed already";
    return;
  }
  ctx.busy.add('replicas');
  record.target = 'replicas';
  const rule = ['OUTPUT', '-o', 'lo', '-p', 'tcp', '-m', 'multiport', '--dports', link.ports.join(','), '-m', 'statistic', '--mode', 'random', '--probability', String(ctx.opts.slowLoss), '-j', 'DROP'];
  // a status request's round trip shows the impairment: its reply is what a replica sends
  const statusMs = async (): Promise<number> => {
    const started = performance.now();
    const s = await ctx.cluster.status(ctx.cluster.replicaIds[0] as string, 5_000);
    return s === null ? -1 : Math.round(performance.now() - started);
  };
  const before = await statusMs();
  record.at = Date.now();
  const slow = { delayMs: ctx.opts.slowDelayMs, loss: ctx.opts.slowLoss, connections: await link.connections(), statusMs: { before, during: -1 } };
  record.slow = slow;
  let added = false;
  try {
    await link.delay(ctx.opts.slowDelayMs);
    iptables(['-A', ...rule]);
    added = true;
    await sleep(ctx.opts.slowMs / 2);
    slow.statusMs.during = await statusMs();
    await sleep(Math.max(0, record.at + ctx.opts.slowMs - Date.now()));
  } finally {
    if (added) iptables(['-D', ...rule]);
    await link.delay(0);
  }
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
  const id = await currentLeader(record, ctx);
  if (id === null) return;
  const proc = ctx.cluster.replica(id);
  // a socket keeps the cgroup it was made in: the cgroup rule cuts the connections the leader makes
  // from now on, the port rules the ones it has (both directions, loopback only)
  await cutOff(record, proc, null, (rel) => [['OUTPUT', '-o', 'lo', '-m', 'cgroup', '--path', rel, '-j', 'DROP']], async () => {
    const next = ctx.cluster.leader(ctx.opts.partitionMs, id);
    await sleep(ctx.opts.partitionMs);
    record.nextLeader = (await next)?.id ?? null;
  });
}

/**
 * Cuts a process off on loopback while `during` runs: it is moved into a cgroup of the drill's own
 * (for fault `record.n`), and iptables rules drop `rules(cgroup)` and every packet to and from the
 * local ports of its TCP connections (to `peers` only, unless null); `record.at` is when the rules
 * went in. The rules go, the process goes back to the root cgroup and the cgroup is removed
 * whatever happens.
 */
async function cutOff(
  record: FaultRecord,
  proc: { readonly pid: number; readonly running: boolean },
  peers: ReadonlySet<number> | null,
  rulesFor: (cgroup: string) => string[][],
  during: () => Promise<void>,
): Promise<void> {
  const rel = `muster-drill-${process.pid}-${record.n}`;
  const dir = join(CGROUP2 as string, rel);
  const rules = rulesFor(rel);
  mkdirSync(dir, { recursive: true });
  const added: string[][] = [];
  try {
    writeFileSync(join(dir, 'cgroup.procs'), String(proc.pid));
    for (const port of localPorts(proc.pid, peers)) {
      rules.push(['OUTPUT', '-o', 'lo', '-p', 'tcp', '--sport', String(port), '-j', 'DROP'], ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), '-j', 'DROP']);
    }
    record.at = Date.now();
    for (const rule of rules) {
      iptables(['-A', ...rule]);
      added.push(rule);
    }
    await during();
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
  // a node cut off counts as down: two would take the quorum
  const node = pickNatsNode(record, ctx);
  if (node === null) return;
  const own = clusterPort(node);
  const others = new Set(ctx.cluster.nats.nodes.filter((n) => n !== node).map(clusterPort));
  const rules = (rel: string): string[][] => [
    ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(own), '-j', 'DROP'],
    ['OUTPUT', '-o', 'lo', '-p', 'tcp', '--sport', String(own), '-j', 'DROP'],
    ['OUTPUT', '-o', 'lo', '-m', 'cgroup', '--path', rel, '-p', 'tcp', '-m', 'multiport', '--dports', [...others].join(','), '-j', 'DROP'],
  ];
  await cutOff(record, node, others, rules, () => sleep(ctx.opts.natsPartitionMs));
  // healed: its copy of a stream it led while cut off can keep appends that never committed, and
  // nats-server 2.9.10 left such a copy where it was (docs/drills.md); restarted like a NATS node
  // whose store stopped catching up, it is not free for the next NATS fault until it holds every stream
  await recoverStalledNode('partition-nats', node, record, ctx);
}
