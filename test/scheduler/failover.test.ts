import { afterEach, describe, expect, it } from 'vitest';
import { connect, publishInput } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { stateHash } from '@muster/core';
import { startNatsCluster, startNatsServer } from '../support/natsServer.ts';
import { readDecisionStream, readWholeLog, replay } from '../support/musterLog.ts';
import { eventually, replicaStatus, spawnScheduler } from '../support/schedulerProcess.ts';
import type { SchedulerProcess } from '../support/schedulerProcess.ts';

const node = (id: string) => ({ id, labels: {}, capacity: { cpu: 64_000, memoryMb: 262_144, slots: 512 }, gpus: [] });
const job = (id: string) => ({ id, identity: { user: 'alice' }, tasks: 2, resources: { cpu: 10, memoryMb: 10 } });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function leaderOf(bus: Bus, replicas: SchedulerProcess[]): Promise<SchedulerProcess> {
  return eventually(async () => {
    for (const r of replicas) if ((await replicaStatus(bus, r.id))?.role === 'leader') return r;
    return null;
  }, 20_000, 'a leader');
}

/** Submits jobs one by one while `during` runs; returns the ids whose publish was acknowledged. */
async function submitStream(bus: Bus, prefix: string, count: number, gapMs: number, during?: (i: number) => Promise<void>): Promise<string[]> {
  const accepted: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${prefix}${i}`;
    for (let attempt = 0; attempt < 80; attempt++) {
      try {
        await publishInput(bus, 'muster.in.submit', job(id), `${id}:1`);
        accepted.push(id);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    await during?.(i);
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return accepted;
}

/** Every accepted job has exactly one GangCommitted in the log, and no input was ingested twice. */
async function checkExactlyOnce(bus: Bus, accepted: string[]): Promise<void> {
  const log = await readWholeLog(bus);
  const events = log.flatMap((l) => l.tx.events);
  const commits = new Map<string, number>();
  for (const e of events) if (e.type === 'GangCommitted') commits.set(e.jobId, (commits.get(e.jobId) ?? 0) + 1);
  for (const id of accepted) expect(commits.get(id), `commits of ${id}`).toBe(1);
  const inputSeqs = events.flatMap((e) => ('inputSeq' in e && e.inputSeq !== undefined ? [e.inputSeq] : []));
  expect(new Set(inputSeqs).size).toBe(inputSeqs.length);
  const decisions = (await readDecisionStream(bus)).filter((m) => m.subject.startsWith('muster.decision.'));
  for (const id of accepted) expect(decisions.filter((m) => m.subject === `muster.decision.${id}`), `decisions of ${id}`).toHaveLength(1);
}

async function twoReplicaFailover(urls: string[], replicas: number, disrupt: (leader: SchedulerProcess) => Promise<void>): Promise<{ bus: Bus; accepted: string[]; replicasList: SchedulerProcess[] }> {
  const a = spawnScheduler({ id: 'a', urls, leaseMs: 600, replicas });
  const b = spawnScheduler({ id: 'b', urls, leaseMs: 600, replicas });
  cleanups.push(() => a.kill(), () => b.kill());
  const bus = await connect({ servers: urls, name: 'test' });
  cleanups.push(() => bus.close());
  const leader = await leaderOf(bus, [a, b]);
  await publishInput(bus, 'muster.in.node.n1.register', node('n1'), 'n1:reg');
  const accepted = await submitStream(bus, 'j', 40, 20, async (i) => {
    if (i === 15) await disrupt(leader);
  });
  return { bus, accepted, replicasList: [a, b] };
}

describe('failover by replay (two replicas, one nats-server)', () => {
  it('kill -9 of the leader under submissions: the standby takes over, every accepted job is decided exactly once', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    let killed: SchedulerProcess | null = null;
    const { bus, accepted, replicasList } = await twoReplicaFailover([server.url], 1, async (leader) => {
      killed = leader;
      await leader.kill();
    });
    const survivor = replicasList.find((r) => r !== killed)!;
    await eventually(async () => {
      const decided = (await readDecisionStream(bus)).filter((m) => m.subject.startsWith('muster.decision.')).length;
      return decided >= accepted.length || null;
    }, 30_000, 'all decisions');
    await checkExactlyOnce(bus, accepted);
    const status = await replicaStatus(bus, survivor.id);
    expect(status?.role).toBe('leader');
    const log = await readWholeLog(bus);
    expect(status?.stateHash).toBe(stateHash(replay(log.filter((l) => l.seq <= status!.seq))));
  }, 120_000);

  it('a paused leader (SIGSTOP) is fenced after SIGCONT: its next append is rejected and it steps down', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    let paused: SchedulerProcess | null = null;
    const { bus, accepted, replicasList } = await twoReplicaFailover([server.url], 1, async (leader) => {
      paused = leader;
      leader.signal('SIGSTOP');
    });
    const other = replicasList.find((r) => r !== paused)!;
    await eventually(async () => (await replicaStatus(bus, other.id))?.role === 'leader' || null, 20_000, 'takeover');
    paused!.signal('SIGCONT');
    // give the old leader inputs to act on, so it tries to append
    const more = await submitStream(bus, 'k', 10, 20);
    await eventually(async () => (await replicaStatus(bus, paused!.id))?.role === 'standby' || null, 20_000, 'old leader steps down');
    await eventually(async () => {
      const decided = (await readDecisionStream(bus)).filter((m) => m.subject.startsWith('muster.decision.')).length;
      return decided >= accepted.length + more.length || null;
    }, 30_000, 'all decisions');
    await checkExactlyOnce(bus, [...accepted, ...more]);
    const log = await readWholeLog(bus);
    // after the takeover, nothing in the log was written under the old term
    const takeover = log.find((l) => l.tx.kind === 'election' && l.tx.leader === other.id);
    expect(takeover).toBeDefined();
    expect(log.filter((l) => l.seq > takeover!.seq && l.tx.leader === paused!.id)).toHaveLength(0);
    expect(paused!.log()).toMatch(/stepping down|fenced/);
  }, 120_000);
});

describe('failover on a three-node nats-server cluster with R3 streams', () => {
  it('survives kill -9 of the leader and of a NATS node, exactly once', async () => {
    const cluster = await startNatsCluster(3);
    cleanups.push(() => cluster.stop());
    let killed: SchedulerProcess | null = null;
    const { bus, accepted, replicasList } = await twoReplicaFailover(cluster.urls, 3, async (leader) => {
      killed = leader;
      await leader.kill();
      await cluster.nodes[2]!.kill();
      setTimeout(() => void cluster.nodes[2]!.restart(), 1500);
    });
    const survivor = replicasList.find((r) => r !== killed)!;
    await eventually(async () => {
      const decided = (await readDecisionStream(bus)).filter((m) => m.subject.startsWith('muster.decision.')).length;
      return decided >= accepted.length || null;
    }, 90_000, 'all decisions').catch((err: unknown) => {
      process.stderr.write(`survivor log:\n${survivor.log().split('\n').filter((l) => !l.includes('"level":20')).slice(-40).join('\n')}\n`);
      throw err;
    });
    await checkExactlyOnce(bus, accepted);
    expect((await replicaStatus(bus, survivor.id))?.role).toBe('leader');
  }, 180_000);
});
