import { describe, expect, it } from 'vitest';
import { InvariantChecker } from '@muster/auditor/testing';
import { foldTransactions, initialState } from '@muster/core';
import type { State } from '@muster/core';
import { goldenHistories } from './histories.ts';

// The later range of a parallel audit starts its invariant checker from a snapshot's state, not from
// the debits and releases before it: the GPUs and rendezvous ports a state records as held must be
// those the checker's own ledgers hold after following the log to that state. Checked after every
// transaction of every golden history (GPU gangs, elastic gangs, restarts with rendezvous, queues).

describe('the invariant checker seeded from a state', () => {
  for (const g of goldenHistories()) {
    it(`holds what following the log holds, after every transaction of ${g.name}`, () => {
      const followed = new InvariantChecker();
      let state: State = initialState();
      let held = 0;
      for (const entry of g.log) {
        followed.beforeTransaction(entry.seq, true, state, entry.tx.events);
        state = foldTransactions(state, [entry]);
        followed.afterTransaction(state);
        const seeded = new InvariantChecker();
        seeded.seed(state);
        expect(seeded.holdings(), `after ${entry.seq}`).toBe(followed.holdings());
        if (followed.holdings() !== '[[],[]]') held++;
      }
      expect(followed.count).toBe(0);
      // the history holds GPUs or ports at some point, or it checks nothing
      if (['lifecycle', 'restarts', 'elastic', 'queues', 'loss-and-failover'].includes(g.name)) expect(held).toBeGreaterThan(0);
    });
  }

});
