import { afterEach, describe, expect, it } from 'vitest';
import { connect, publishInput } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { startNatsServer } from '../support/natsServer.ts';
import { readWholeLog } from '../support/musterLog.ts';
import { eventually, replicaStatus, spawnScheduler } from '../support/schedulerProcess.ts';

// At 200 gangs/s a session over thousands of pending jobs took 0.3-3 s, and while it ran the
// leader refreshed nothing: standbys took over from live leaders (69 terms for 4 faults in one
// drill, docs/drills.md). A leader computes its turns in slices now and refreshes its lease
// between them, so a session longer than the lease costs no takeover.
const LEASE_MS = 200;
const NODES = 100;
// enough pending jobs that a session after a completion outlasts the lease on an idle machine
// (16,000 no longer did once sessions got faster)
const PENDING = 32_000;
const COMPLETIONS = 5;

const node = (id: string) => ({ id, labels: {}, capacity: { cpu: 8000, memoryMb: 65_536, slots: 8 }, gpus: [] });
const fill = (i: number) => ({ id: `fill${i}`, identity: { user: 'ops' }, tasks: 8, resources: { cpu: 1000, memoryMb: 1024 }, placement: { policy: 'pack' } });
// distinct requests, none fitting while the fill runs: every one is an allocator run when capacity frees
const blocked = (i: number) => ({
  id: `p${i}`,
  identity: { user: 'alice' },
  tasks: 2 + (i % 15),
  resources: { cpu: 500 + (i % 11), memoryMb: 1024 + i },
  placement: { policy: i % 2 === 0 ? 'pack' : 'spread' },
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** Publishes `count` inputs, `width` at a time. */
async function publishAll(bus: Bus, count: number, input: (i: number) => { subject: string; body: unknown; msgId: string }, width = 200): Promise<void> {
  for (let start = 0; start < count; start += width) {
    const batch = [];
    for (let i = start; i < Math.min(count, start + width); i++) {
      const { subject, body, msgId } = input(i);
      batch.push(publishInput(bus, subject, body, msgId));
    }
    await Promise.all(batch);
  }
}

describe('a leader whose sessions take longer than the lease', () => {
  it('keeps the lease: a standby watching does not take over while the sessions run', async () => {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const a = spawnScheduler({ id: 'a', urls: [server.url], leaseMs: LEASE_MS, logLevel: 'info' });
    cleanups.push(() => a.kill());
    const bus = await connect({ servers: server.url, name: 'test' });
    cleanups.push(() => bus.close());
    await eventually(async () => (await replicaStatus(bus, 'a'))?.role === 'leader' || null, 20_000, 'a leading');
    await publishAll(bus, NODES, (i) => ({ subject: `muster.in.node.n${i}.register`, body: node(`n${i}`), msgId: `n${i}:reg` }));
    await publishAll(bus, NODES, (i) => ({ subject: 'muster.in.submit', body: fill(i), msgId: `fill${i}:1` }));
    await publishAll(bus, PENDING, (i) => ({ subject: 'muster.in.submit', body: blocked(i), msgId: `p${i}:1` }));
    const ingested = 2 * NODES + PENDING;
    await eventually(async () => ((await replicaStatus(bus, 'a'))?.lastInputSeq ?? 0) >= ingested || null, 60_000, 'every input ingested');
    // the standby starts once the backlog is in (on a loaded machine, a burst of inputs alone can starve a leader of CPU for a lease)
    const b = spawnScheduler({ id: 'b', urls: [server.url], leaseMs: LEASE_MS, logLevel: 'info' });
    cleanups.push(() => b.kill());
    await eventually(async () => (await replicaStatus(bus, 'b'))?.role === 'standby' || null, 60_000, 'b standing by');
    const { term } = (await replicaStatus(bus, 'a'))!;
    const logged = a.log().length;

    // each fill gang finishing frees a node: every pending job is tried again, each session a long one
    const log = await readWholeLog(bus);
    // the node each member of a gang was bound on
    const commits = new Map<string, string[]>();
    for (const e of log.flatMap((l) => l.tx.events)) {
      if (e.type !== 'GangCommitted') continue;
      const on: string[] = [];
      for (const x of e.allocations) for (const m of x.members) on[m] = x.node;
      commits.set(e.jobId, on);
    }
    // (a slow turn is logged at most once a second: the completions come further apart)
    for (let k = 0; k < COMPLETIONS; k++) {
      const on = commits.get(`fill${k}`)!;
      await publishAll(bus, on.length, (m) => ({ subject: `muster.in.node.${on[m]}.done`, body: { jobId: `fill${k}`, member: m, ok: true }, msgId: `fill${k}:${m}:done` }));
      await new Promise((r) => setTimeout(r, 1100));
    }
    await eventually(async () => ((await replicaStatus(bus, 'a'))?.lastInputSeq ?? 0) >= ingested + COMPLETIONS * 8 || null, 60_000, 'the completions ingested');
    await new Promise((r) => setTimeout(r, 1000));

    // the test is only worth something if a turn did outlast the lease
    expect(a.log().slice(logged), 'a turn longer than the lease').toContain('a turn took longer than the lease');
    const status = await replicaStatus(bus, 'a');
    expect(status?.role).toBe('leader');
    expect(status?.term).toBe(term);
    expect((await replicaStatus(bus, 'b'))?.role).toBe('standby');
    expect((await readWholeLog(bus)).filter((l) => l.tx.kind === 'election' && l.tx.term > term)).toEqual([]);
  }, 180_000);
});
