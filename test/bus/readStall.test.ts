import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendTransactions, isBusError, readLog } from '@muster/bus';
import { startTestBus } from '../support/natsBus.ts';
import type { TestBus } from '../support/natsBus.ts';
import { chain } from './transactions.ts';

let bus: TestBus;
beforeEach(async () => {
  bus = await startTestBus();
});
afterEach(async () => {
  await bus.stop();
});

describe('a bulk read whose server stops answering for a while', () => {
  it('given a log of 3,000 transactions, when the server is stopped for 8 s during the read, then the read ends with every one or fails; it never ends short', async () => {
    const txs = chain(3_000);
    for (let i = 0; i < txs.length; i += 500) await appendTransactions(bus.bus, txs.slice(i, i + 500), i);
    const pid = bus.server?.pid ?? -1;
    const seqs: number[] = [];
    let stopped = false;
    let outcome: 'read' | 'stalled' = 'read';
    try {
      for await (const entry of readLog(bus.bus)) {
        seqs.push(entry.seq);
        // a pull of 512 expires (5 s) while the server is stopped: before, the read ended there
        if (!stopped && seqs.length === 600) {
          stopped = true;
          process.kill(pid, 'SIGSTOP');
          setTimeout(() => process.kill(pid, 'SIGCONT'), 8_000);
        }
      }
    } catch (err) {
      if (!isBusError(err, 'READ_SHORT')) throw err;
      outcome = 'stalled';
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(stopped).toBe(true);
    if (outcome === 'read') expect(seqs.length).toBe(3_000);
    // a read that failed is read again by its caller; one that ended short would be taken for the whole log
    else expect(seqs.length).toBeLessThan(3_000);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  }, 60_000);
});
