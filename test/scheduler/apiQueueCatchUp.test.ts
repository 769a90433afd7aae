import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishInput } from '@muster/bus';
import type { State } from '@muster/core';
import { ApiServer } from '@muster/scheduler/testing';
import { Cluster, queue } from '@muster/core/testing';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';

// muster.api.submit checks a job's queue against the replica's state (DESIGN.md §12). A state that
// has not folded every input published before the submission may not know a queue set a moment
// ago: its refusal stands only once the replica has caught up with MUSTER_IN.

const job = (id: string, q: string) => JSON.stringify({ id, identity: { user: 'u', queue: q, project: 'p' }, tasks: 1, resources: { cpu: 100, memoryMb: 64 } });

describe('muster.api.submit and a queue set a moment ago', () => {
  let nats: TestBus;
  beforeAll(async () => {
    nats = await startTestBus();
  }, 60_000);
  afterAll(async () => {
    await nats?.stop();
  });

  it('waits for the replica to fold the inputs before it, then accepts; a refusal from a caught-up state stands', async () => {
    const before = new Cluster();
    before.run(queue({ name: 'a' }));
    const stale: State = before.state;
    const after = new Cluster();
    after.run(queue({ name: 'a' }));
    after.run(queue({ name: 'c' }));
    // (and the submission the API forwards: the state has then folded MUSTER_IN to its end)
    after.run(queue({ name: 'd' }));
    // MUSTER_IN holds the two queue inputs; the replica has folded only the first
    await publishInput(nats.bus, 'muster.in.queue.a.set', { name: 'a' }, 'qa');
    await publishInput(nats.bus, 'muster.in.queue.c.set', { name: 'c' }, 'qc');
    let state = stale;
    const api = new ApiServer(nats.bus, () => state, pino({ level: 'silent' }));
    setTimeout(() => {
      state = after.state;
    }, 300);
    const reply = await api.handle('muster.api.submit', job('j1', 'c'));
    expect(reply).toMatchObject({ ok: true, jobId: 'j1' });
    // caught up (both inputs folded): a queue that does not exist is refused at once, naming the field
    const refused = await api.handle('muster.api.submit', job('j2', 'nope'));
    expect(refused).toMatchObject({ ok: false, error: { code: 'unknown', path: 'identity.queue' } });
  }, 30_000);
});
