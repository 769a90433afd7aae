import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { ResolvedOptions } from './config.ts';
import type { WonLease } from './leaseKeeper.ts';
import type { LeaseNews, LeaseOrder, LeaseWorkerData } from './leaseThreadProtocol.ts';

// the built leaseWorker.js beside this file; from the sources (vitest, tsx), a boot file that registers tsx in the thread first
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './leaseWorkerBoot.js' : './leaseWorker.js', import.meta.url);

/**
 * How long a leader's main loop may show no progress before its lease is no longer refreshed: four
 * leases, at least 2 s. A lease's worth was too little: ingesting a burst of 16,000 inputs kept the
 * event loop busy for 200-250 ms between ticks (test/scheduler/longSession.test.ts, lease 200 ms),
 * work that is progress all the same.
 */
function wedgedMs(leaseMs: number): number {
  return Math.max(2_000, 4 * leaseMs);
}

/**
 * A leader's lease refreshed on a thread and a NATS connection of its own (leaseWorker.ts), so
 * that load cannot starve it: a turn that keeps the event loop busy, or appends queued ahead on
 * the main connection, no longer delay a refresh. It refreshes only while the main loop shows
 * progress (`tick`): a leader wedged for `wedgedMs` loses the lease, as it did when the loop itself
 * refreshed it.
 */
export class LeaseThread {
  private readonly progress = new Int32Array(new SharedArrayBuffer(4));
  private readonly worker: Worker;
  private onLost: (() => void) | null = null;
  // a lease was handed to the thread (`hold`) and not dropped since
  private holding = false;
  private dropped: ((revision: number | null) => void) | null = null;
  // the thread failed or ended: nothing is refreshed, and nothing answers a drop
  private dead = false;
  private readied: (ok: boolean) => void = () => undefined;
  /** Resolves once the thread is connected (true), or failed (false). */
  readonly ready = new Promise<boolean>((resolve) => (this.readied = resolve));

  constructor(opts: ResolvedOptions, log: Logger) {
    const data: LeaseWorkerData = {
      servers: Array.isArray(opts.natsUrl) ? [...opts.natsUrl] : [opts.natsUrl],
      ...(opts.user === undefined ? {} : { user: opts.user, pass: opts.pass ?? '' }),
      id: opts.id,
      leaseMs: opts.leaseMs,
      wedgedMs: wedgedMs(opts.leaseMs),
      progress: this.progress.buffer as SharedArrayBuffer,
    };
    this.worker = new Worker(WORKER_ENTRY, { workerData: data });
    // a replica stops with or without it
    this.worker.unref();
    this.worker.on('message', (news: LeaseNews) => {
      switch (news.type) {
        case 'ready':
          this.readied(true);
          break;
        case 'lost':
          this.holding = false;
          this.onLost?.();
          break;
        case 'dropped':
          this.dropped?.(news.revision);
          this.dropped = null;
          break;
        case 'stalled':
          log.warn({ ms: news.ms }, 'the main loop showed no progress for too long (wedged?): the lease is no longer refreshed');
          break;
        case 'failed':
          log.error({ reason: news.message }, 'the lease thread could not connect: a leader\'s lease is not refreshed');
          this.died();
          break;
      }
    });
    this.worker.on('error', (err) => {
      log.error({ err }, 'the lease thread failed: a leader\'s lease is not refreshed');
      this.died();
    });
    this.worker.on('exit', () => this.died());
  }

  private died(): void {
    this.dead = true;
    this.readied(false);
    this.dropped?.(null);
    this.dropped = null;
  }

  /** The main loop moved on (a turn's slice, a loop's turn, an append answered). */
  tick(): void {
    Atomics.add(this.progress, 0, 1);
  }

  /**
   * Refreshes `won` from now on; `onLost` is called if someone else holds it at a refresh. Held
   * already (a takeover's check, then its term): refreshing goes on from the revision the thread
   * last wrote, under `won`'s term.
   */
  hold(won: WonLease, onLost: () => void): void {
    this.onLost = onLost;
    this.tick();
    this.post({ type: 'hold', term: won.term, revision: this.holding ? null : won.revision });
    this.holding = true;
  }

  /** Stops refreshing, after the refresh in flight; `won` gets the lease's last revision (for a release). A no-op when nothing is held. */
  async drop(won: WonLease): Promise<void> {
    this.onLost = null;
    if (this.dead || !this.holding) return;
    this.holding = false;
    const revision = await new Promise<number | null>((resolve) => {
      this.dropped = resolve;
      this.post({ type: 'drop' });
    });
    if (revision !== null) won.revision = revision;
  }

  /** Ends the thread and its connection. */
  async close(): Promise<void> {
    this.died();
    await this.worker.terminate();
  }

  private post(order: LeaseOrder): void {
    this.worker.postMessage(order);
  }
}
