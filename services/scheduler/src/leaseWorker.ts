// The lease thread (LeaseThread): refreshes a leader's lease on a NATS connection of its own, every
// third of a lease, while the leader's main loop shows progress. Neither a busy event loop (a long
// turn, a burst of inputs) nor appends queued on the main connection delay a refresh; a main loop
// that stopped moving (a wedged leader) stops them, so the lease runs out and a standby takes over.
import { parentPort, workerData } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, openLeaderLease } from '@muster/bus';
import type { LeaseNews, LeaseOrder, LeaseWorkerData } from './leaseThreadProtocol.ts';

const data = workerData as LeaseWorkerData;
const port = parentPort!;
const tell = (news: LeaseNews): void => port.postMessage(news);
const progress = new Int32Array(data.progress);
const every = Math.max(20, Math.floor(data.leaseMs / 3));

interface Held {
  term: number;
  revision: number;
}
// set by the orders (callbacks): a plain `null` here would narrow it to null for the compiler
let held = null as Held | null;
let refreshing: Promise<void> = Promise.resolve();
let seen = Atomics.load(progress, 0);
let progressAt = performance.now();
let stalledSaid = false;

// orders are queued until the connection is up (a port holds messages until it is listened to)
try {
  const bus = await connect({
    servers: data.servers,
    name: `muster-scheduler-${data.id}-lease`,
    ...(data.user === undefined ? {} : { user: data.user, pass: data.pass ?? '' }),
    // a write waits no longer than a lease: a standby does not either
    timeoutMs: Math.max(500, data.leaseMs),
  });
  const lease = await openLeaderLease(bus);
  tell({ type: 'ready' });
  port.on('message', (order: LeaseOrder) => {
    if (order.type === 'hold') {
      // the lease held already (a takeover's check went on into its term): the term only, in place,
      // so a refresh in flight still records the revision it wrote
      if (order.revision === null) {
        if (held !== null) held.term = order.term;
      } else held = { term: order.term, revision: order.revision };
      seen = Atomics.load(progress, 0);
      progressAt = performance.now();
      stalledSaid = false;
      return;
    }
    // after the refresh in flight: the revision it wrote is the one to release
    void refreshing.then(() => {
      tell({ type: 'dropped', revision: held?.revision ?? null });
      held = null;
    });
  });
  for (;;) {
    const started = performance.now();
    const h = held;
    if (h !== null) {
      const count = Atomics.load(progress, 0);
      if (count !== seen) [seen, progressAt, stalledSaid] = [count, started, false];
      if (started - progressAt <= data.wedgedMs) {
        refreshing = lease.updateLease(h.revision, { id: data.id, term: h.term }).then((r) => {
          if (held !== h) return;
          if (r.ok) h.revision = r.revision;
          else if (r.code === 'conflict') {
            held = null;
            tell({ type: 'lost' });
          }
          // a timeout or an error: the next refresh tries again against the same revision
        });
        await refreshing;
      } else if (!stalledSaid) {
        stalledSaid = true;
        tell({ type: 'stalled', ms: Math.round(started - progressAt) });
      }
    }
    await sleep(Math.max(0, every - (performance.now() - started)));
  }
} catch (err) {
  tell({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
}
