import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendTransactions, lastLogSequence, publishInput, readLogMessage } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { makeTransaction, stateHash } from '@muster/core';
import type { SchedulerHandle } from '@muster/scheduler';
import { startSingleLeader } from '../support/singleLeader.ts';
import type { SingleLeader } from '../support/singleLeader.ts';
import { readDecisionStream, readWholeLog, replay } from '../support/musterLog.ts';
import { eventually } from '../support/schedulerProcess.ts';

const JOBS = 600;
// 601 gangs run at once on one node, each holding a rendezvous port (DESIGN.md §15): a range wider than the default 500
const node = (id: string) => ({ id, labels: {}, capacity: { cpu: 1_000_000, memoryMb: 1_000_000, slots: 4096 }, gpus: [], ports: { from: 20_000, to: 29_999 } });
const job = (id: string) => ({ id, identity: { user: 'alice' }, tasks: 2, resources: { cpu: 10, memoryMb: 10 } });

describe('pipelined appends under a foreign write', () => {
  let leader: SingleLeader;
  let bus: Bus;
  let scheduler: SchedulerHandle;

  beforeAll(async () => {
    leader = await startSingleLeader([node('n1')]);
    ({ bus, scheduler } = leader);
  });

  afterAll(async () => {
    await leader?.stop();
  });

  it('lands nothing the old term planned after a transaction another writer slipped in; every job is still decided once', async () => {
    // a steady stream of submissions, so the leader has appends in flight when ours lands
    const acks: Promise<unknown>[] = [];
    let streaming = true;
    const stream = (async () => {
      for (let i = 0; i < JOBS; i++) {
        acks.push(publishInput(bus, 'muster.in.submit', job(`p${i}`), `p${i}:1`));
        if (streaming && i % 10 === 9) await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await eventually(async () => (await readWholeLog(bus)).length >= 4, 15_000, 'the leader appending');
    let foreignSeq = 0;
    let oldTerm = 0;
    for (let attempt = 0; foreignSeq === 0; attempt++) {
      if (attempt > 2000) throw new Error('no foreign append landed');
      const lastSeq = await lastLogSequence(bus);
      const last = (await readLogMessage(bus, lastSeq))!;
      const tx = makeTransaction(last.hash, { kind: 'fact', term: last.tx.term, leader: 'intruder', at: last.tx.at, session: last.tx.session }, []);
      // the leader may get in first: then try again at the new end
      if ((await appendTransactions(bus, [tx], lastSeq)).ok) {
        foreignSeq = lastSeq + 1;
        oldTerm = last.tx.term;
      }
    }
    streaming = false;
    await stream;
    await Promise.all(acks);
    // one more job, so the log surely goes on after the foreign transaction
    await publishInput(bus, 'muster.in.submit', job('last'), 'last:1');

    const decided = await eventually(async () => {
      const commits = (await readDecisionStream(bus)).filter((m) => m.subject.startsWith('muster.decision.') && m.body.type === 'GangCommitted');
      return commits.length >= JOBS + 1 ? commits : null;
    }, 60_000, 'every job decided');
    expect(new Set(decided.map((m) => m.subject)).size).toBe(JOBS + 1);
    expect(decided).toHaveLength(JOBS + 1);

    const log = await readWholeLog(bus);
    const after = log.filter((l) => l.seq > foreignSeq);
    // the old term's in-flight and later plans were fenced off: the next writer is a new term
    expect(after[0]?.tx.events[0]?.type).toBe('LeaderElected');
    expect(after.every((l) => l.tx.term > oldTerm)).toBe(true);
    await eventually(() => scheduler.state().seq === log[log.length - 1]!.seq || null, 10_000, 'the replica caught up');
    expect(stateHash(scheduler.state())).toBe(stateHash(replay(await readWholeLog(bus))));
  });
});
