import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import type { Logger } from 'pino';
import { simulatedNodes, startAgent } from '@muster/agent';
import type { Agent } from '@muster/agent';
import { connect, ensureStreams, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { within } from '@muster/stack';
import type { NatsClusterHandle, SchedulerProcess, Stack, StackStopReport } from '@muster/stack';
import { startLinkProxy } from './drillLinkProxy.ts';
import type { LinkProxy } from './drillLinkProxy.ts';
import type { DrillOptions } from './drillOptions.ts';
import { slowNetworkUnavailable } from './drillNetworkChecks.ts';

/** What `muster.replica.<id>.status` answers (defined by the scheduler that answers it). */
export type { ReplicaStatus } from '@muster/core';
import type { ReplicaStatus } from '@muster/core';
import { sleep } from './drillSleep.ts';

/** The drill's cluster: three NATS nodes, three replica processes, simulated agents, and the drill's own connection. */
export interface DrillCluster {
  readonly nats: NatsClusterHandle;
  /** The drill's own connection. */
  readonly bus: Bus;
  readonly replicaIds: readonly string[];
  /** The proxies the replicas reach NATS through (null: they connect directly), there when the drill may inject `slow-network`. */
  readonly link: LinkProxy | null;
  /** Replicas paused (SIGSTOP) right now. */
  readonly paused: Set<string>;
  /** The current process of a replica. */
  replica(id: string): SchedulerProcess;
  /** Starts a new process for a replica id (it rebuilds from the log and stands by); `clockAheadMs` runs it under faketime, its wall clock that far ahead; throws while the id's previous process still runs. */
  startReplica(id: string, clockAheadMs?: number): SchedulerProcess;
  /** One replica's status, or null when it does not answer within `timeoutMs`. */
  status(id: string, timeoutMs?: number): Promise<ReplicaStatus | null>;
  /** Every replica's status, asked in parallel. */
  statuses(timeoutMs?: number): Promise<Map<string, ReplicaStatus | null>>;
  /** The replica answering as leader (the highest term if two do), polled for at most `timeoutMs`; null if none. */
  leader(timeoutMs?: number, except?: string): Promise<ReplicaStatus | null>;
  /** Stops the agents, closes the connection and stops the stack, in bounded time. */
  stop(): Promise<StackStopReport>;
}

const REPLICA_IDS = ['s1', 's2', 's3'];

/** Starts the cluster on `stack` and waits for a leader and for every simulated node to be registered. */
export async function startDrillCluster(stack: Stack, opts: DrillOptions, progress: (line: string) => void): Promise<DrillCluster> {
  // the replicas must reconnect only to the urls they are given (the proxies, when slowed), never to a node's own
  const nats = await stack.startNatsCluster(3, { noAdvertise: true });
  progress(`nats: 3 nodes on ${nats.urls.join(',')}`);
  let bus: Bus | null = null;
  let agent: Agent | null = null;
  let link: LinkProxy | null = null;
  const agentLog: Logger = pino({ level: opts.agentLogLevel }, pino.destination({ dest: join(stack.dir, 'agents.log'), mkdir: true, sync: false }));
  const stopAll = async (): Promise<StackStopReport> => {
    // a stop that fails must not keep the stack running
    if (agent !== null) await within(agent.stop(), 10_000).catch((err: unknown) => progress(`the agents did not stop cleanly: ${String(err)}`));
    agentLog.flush();
    if (bus !== null) await within(bus.close(), 5_000).catch(() => undefined);
    const stopped = await stack.stop();
    if (link !== null) await link.close();
    return stopped;
  };
  try {
    bus = await connect({ servers: nats.urls, name: 'muster-drill' });
    const conn = bus;
    // created once here, so three replicas starting at once do not race to create them
    await ensureStreams(conn, { replicas: 3 });
    // only a drill that may slow the replicas' network routes them through proxies
    if (opts.faults.includes('slow-network') && slowNetworkUnavailable() === null) {
      link = await startLinkProxy(nats.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
      progress(`replicas reach NATS through proxies on ${link.urls.join(',')}`);
    }
    const replicaUrls = link?.urls ?? nats.urls;
    const procs = new Map<string, SchedulerProcess>();
    const startReplica = (id: string, clockAheadMs = 0): SchedulerProcess => {
      // two processes with one replica id fight over the lease until one is stopped
      const previous = procs.get(id);
      if (previous?.running === true) throw new Error(`replica ${id} still runs (pid ${previous.pid}): not starting a second one`);
      const proc = stack.spawnScheduler({
        ...(clockAheadMs === 0 ? {} : { env: fastClockEnv(clockAheadMs) }),
        id,
        urls: replicaUrls,
        leaseMs: opts.leaseMs,
        heartbeatTimeoutMs: opts.heartbeatTimeoutMs,
        replicas: 3,
        logLevel: opts.logLevel,
      });
      procs.set(id, proc);
      return proc;
    };
    for (const id of REPLICA_IDS) startReplica(id);
    const status = async (id: string, timeoutMs = 1_000): Promise<ReplicaStatus | null> => {
      try {
        const reply = await conn.request(subjects.replicaStatus(id), '', { timeoutMs });
        return parseStatus(reply.text());
      } catch {
        return null;
      }
    };
    const statuses = async (timeoutMs = 1_000): Promise<Map<string, ReplicaStatus | null>> =>
      new Map(await Promise.all(REPLICA_IDS.map(async (id) => [id, await status(id, timeoutMs)] as const)));
    const leader = async (timeoutMs = 10_000, except?: string): Promise<ReplicaStatus | null> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const leaders = [...(await statuses(500)).values()].filter((s): s is ReplicaStatus => s !== null && s.role === 'leader' && s.id !== except);
        if (leaders.length > 0) return leaders.reduce((a, b) => (b.term > a.term ? b : a));
        if (Date.now() >= deadline) return null;
        await sleep(100);
      }
    };
    // replica processes rebuild from the log before they answer: give them time on a loaded machine
    const first = await leader(60_000);
    if (first === null) throw new Error('no scheduler replica became leader within 60 s');
    progress(`replicas: ${REPLICA_IDS.join(', ')} up, ${first.id} leads (term ${first.term})`);
    // a large simulated cluster heartbeats less often (still well inside the replicas' heartbeat timeout)
    const heartbeatMs = opts.nodes > 150 ? Math.min(2_000, Math.floor(opts.heartbeatTimeoutMs / 3)) : 1_000;
    agent = await startAgent({ natsUrl: nats.urls, nodes: simulatedNodes(opts.nodes), simulate: true, heartbeatMs, logger: agentLog });
    if ((await within(agent.registered, 30_000)) === null) throw new Error(`the ${opts.nodes} simulated nodes were not registered within 30 s`);
    progress(`agents: ${opts.nodes} simulated nodes registered`);
    return {
      nats,
      bus: conn,
      replicaIds: REPLICA_IDS,
      link,
      paused: new Set(),
      replica: (id) => {
        const proc = procs.get(id);
        if (proc === undefined) throw new Error(`no replica ${id}`);
        return proc;
      },
      startReplica,
      status,
      statuses,
      leader,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Where Debian's libfaketime lives (package `libfaketime`, pulled in by `faketime`), or null when it is not installed. */
export function libfaketime(): string | null {
  const candidates = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/faketime/libfaketime.so.1'];
  return candidates.find((p) => existsSync(p)) ?? null;
}

// the wall clock ahead, the monotonic clock left alone (leases and heartbeats run on it, as on a machine whose clock is wrong)
function fastClockEnv(aheadMs: number): NodeJS.ProcessEnv {
  const lib = libfaketime();
  if (lib === null) throw new Error('libfaketime is not installed (apt-get install -y faketime)');
  return { ...process.env, LD_PRELOAD: lib, FAKETIME: `+${Math.round(aheadMs / 1000)}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1', FAKETIME_NO_CACHE: '1' };
}

function parseStatus(text: string): ReplicaStatus | null {
  try {
    const s = JSON.parse(text) as Partial<ReplicaStatus>;
    if (typeof s.id !== 'string' || typeof s.role !== 'string' || typeof s.seq !== 'number' || typeof s.stateHash !== 'string') return null;
    return { id: s.id, role: s.role, seq: s.seq, term: s.term ?? 0, lastInputSeq: s.lastInputSeq ?? 0, stateHash: s.stateHash, refusedBecause: s.refusedBecause ?? null };
  } catch {
    return null;
  }
}
