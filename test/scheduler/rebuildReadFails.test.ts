// A replica whose rebuild cannot read the transaction behind the newest published decision still
// stands by, and leads once that read succeeds. In the hour soak a restarted replica's read was
// served by a NATS node whose copy had stalled: the rebuild failed on it and started over for more
// than a minute, and the replica never stood by. Real nats-server; the replica's user is denied the
// log's message reads (`$JS.API.STREAM.MSG.GET.MUSTER_LOG`), then allowed them by a config reload.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendTransactions, connect, lastLogSequence, lastPublishedDecision } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { makeTransaction, transactionHash } from '@muster/core';
import type { SchedulerHandle } from '@muster/scheduler';
import { allowEverything, commitAsAdmin, startDeniedServer, startReplicaAs } from '../support/deniedReplica.ts';
import type { NatsServerHandle } from '../support/natsServer.ts';
import { readWholeLog } from '../support/musterLog.ts';
import { eventually, replicaStatus } from '../support/schedulerProcess.ts';

const DENIED = '"$JS.API.STREAM.MSG.GET.MUSTER_LOG"';
// more transactions after the last decision than a replica keeps at hand from its replay (256 to
// 512), so its look at the published decisions must read that decision's transaction
const LATER_TXS = 600;

describe('a replica whose rebuild cannot read a published decision\'s transaction', () => {
  let server: NatsServerHandle;
  let bus: Bus;

  const start = (id: string, user: string): Promise<SchedulerHandle> => startReplicaAs(server, id, user);

  beforeAll(async () => {
    server = await startDeniedServer(DENIED);
    bus = await connect({ servers: server.url, name: 'test', user: 'admin', pass: 'admin' });
    await commitAsAdmin(server, bus, 3);
    // the log grows on past the last decision: empty facts chained on what s1 wrote
    const history = await readWholeLog(bus);
    const last = history[history.length - 1]!.tx;
    let prev = transactionHash(last);
    const later = [];
    for (let i = 0; i < LATER_TXS; i++) {
      const tx = makeTransaction(prev, { kind: 'fact', term: last.term, leader: 's1', at: last.at, session: 0 }, []);
      later.push(tx);
      prev = transactionHash(tx);
    }
    expect((await appendTransactions(bus, later, history.length)).ok).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
  });

  it('stands by while the read fails, and leads once it succeeds', async () => {
    const end = await lastLogSequence(bus);
    const decided = (await lastPublishedDecision(bus))!;
    expect(end - decided.logSeq).toBeGreaterThanOrEqual(LATER_TXS);
    // rebuilt and standing by: before the fix, startScheduler never returned (the rebuild failed on
    // the read and started over, again and again)
    const s2 = await Promise.race([start('s2', 'replica'), new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
    expect(s2).not.toBeNull();
    try {
      const status = await eventually(async () => {
        const s = await replicaStatus(bus, 's2');
        return s?.role === 'standby' ? s : null;
      }, 10_000, 's2 standing by');
      expect(status.refusedBecause).toBeNull();
      // it cannot check the published decisions: it does not lead, and nothing is written
      await new Promise((r) => setTimeout(r, 1_500));
      expect(s2!.role()).toBe('standby');
      expect(await lastLogSequence(bus)).toBe(end);
      // the read allowed again (the server reloads its config): it leads
      allowEverything(server, DENIED);
      await eventually(() => s2!.role() === 'leader', 15_000, 's2 leading once it can read');
      // its election lands right after it takes the role (the inputs' consumer is set up meanwhile)
      await eventually(async () => (await lastLogSequence(bus)) > end, 10_000, 's2 appending its election');
    } finally {
      await s2?.stop();
    }
  }, 60_000);
});
